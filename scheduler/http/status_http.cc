// The SSL server of Debian's cpp-httplib (built with OpenSSL) is declared
// only with this macro.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#include "scheduler/http/status_http.h"

#include <httplib.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/rpc/cluster_token.h"
#include "common/thread_name.h"
#include "google/protobuf/util/json_util.h"
#include "scheduler/http/metrics_text.h"
#include "scheduler/http/status_page.h"

namespace herald::scheduler {
namespace {

constexpr char kCookie[] = "herald_token";

std::string Json(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, options);
  return out;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The token a request carries: `Authorization: Bearer T`, else the cookie.
std::string GivenToken(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (absl::StartsWith(auth, "Bearer ")) return auth.substr(7);
  for (absl::string_view part : absl::StrSplit(req.get_header_value("Cookie"), ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, kCookie) && absl::ConsumePrefix(&part, "=")) {
      return std::string(part);
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<StatusHttpServer>> StatusHttpServer::Start(
    const StatusHttpOptions& options, const JobManager* jobs, const NodeRegistry* registry) {
  const std::string& listen = options.listen;
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.flag, ": \"", listen, "\" is not host:port"));
  }
  const std::string host = listen.substr(0, colon);
  std::unique_ptr<StatusHttpServer> s(new StatusHttpServer());
  s->tls_ = !options.tls_cert_path.empty() && !options.tls_key_path.empty();
  if (s->tls_) {
    auto ssl = std::make_unique<httplib::SSLServer>(options.tls_cert_path.c_str(),
                                                    options.tls_key_path.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(options.flag, ": cannot load TLS certificate ",
                                                     options.tls_cert_path, " and key ",
                                                     options.tls_key_path));
    }
    s->server_ = std::move(ssl);
  } else {
    s->server_ = std::make_unique<httplib::Server>();
  }
  const std::string token = options.token;
  const bool secure = s->tls_;
  auto authorized = [token](const httplib::Request& req) {
    return token.empty() || rpc::SameSecret(token, GivenToken(req));
  };
  auto login = [token, secure](const std::string& given, httplib::Response& res) {
    if (token.empty() || rpc::SameSecret(token, given)) {
      res.set_header("Set-Cookie",
                     absl::StrCat(kCookie, "=", given, "; Path=/; HttpOnly; SameSite=Strict",
                                  secure ? "; Secure" : ""));
      res.set_redirect("/", 303);
    } else {
      res.status = 401;
      res.set_content(LoginPageHtml("wrong token"), "text/html; charset=utf-8");
    }
  };
  httplib::Server& server = *s->server_;
  if (options.page) {
    server.Get("/", [authorized](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req)) {
        res.status = 401;
        res.set_content(LoginPageHtml(""), "text/html; charset=utf-8");
        return;
      }
      res.set_content(StatusPageHtml(), "text/html; charset=utf-8");
    });
    server.Get("/login", [login](const httplib::Request& req, httplib::Response& res) {
      login(req.get_param_value("token"), res);
    });
    server.Post("/login", [login](const httplib::Request& req, httplib::Response& res) {
      login(req.get_param_value("token"), res);
    });
    server.Get("/api/status", [authorized, jobs, registry](const httplib::Request& req,
                                                           httplib::Response& res) {
      if (!authorized(req)) {
        res.status = 401;
        res.set_content("{\"error\":\"the cluster token is required\"}", "application/json");
        return;
      }
      proto::ListNodesResponse nodes;
      for (const proto::NodeStatus& n : registry->List()) *nodes.add_nodes() = n;
      proto::JobStatusResponse status;
      auto all = jobs->Status("", {/*losses=*/false, /*history=*/true, /*spec=*/true});
      if (all.ok()) {
        for (auto& j : *all) *status.add_jobs() = std::move(j);
      }
      res.set_content(absl::StrCat("{\"nodes\":", Json(nodes), ",\"jobs\":", Json(status), "}"),
                      "application/json");
    });
    const std::string chart_js = ReadFileOrEmpty(options.chart_js_path);
    server.Get("/chart.js", [chart_js](const httplib::Request&, httplib::Response& res) {
      if (chart_js.empty()) {
        res.status = 404;
        return;
      }
      res.set_header("Cache-Control", "max-age=3600");
      res.set_content(chart_js, "application/javascript");
    });
  }
  server.Get("/metrics",
             [authorized, jobs, registry](const httplib::Request& req, httplib::Response& res) {
               if (!authorized(req)) {
                 res.status = 401;
                 return;
               }
               res.set_content(RenderMetrics(jobs->TakeSnapshot(), registry->List()),
                               "text/plain; version=0.0.4; charset=utf-8");
             });
  s->port_ =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (s->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat(options.flag, ": cannot bind ", listen));
  }
  httplib::Server* raw = s->server_.get();
  s->thread_ = std::thread([raw] {
    NameThisThread("status-http");
    raw->listen_after_bind();
  });
  return s;
}

StatusHttpServer::~StatusHttpServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace herald::scheduler
