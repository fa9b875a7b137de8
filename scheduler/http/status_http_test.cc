// The status page server: a real HTTP(S) server on 127.0.0.1 port 0, asked
// with a real HTTP client. The page with real jobs in a browser is
// tests/status_page_test.

#define CPPHTTPLIB_OPENSSL_SUPPORT
#include "scheduler/http/status_http.h"

#include <httplib.h>

#include <string>

#include "common/data/test_util.h"
#include "gtest/gtest.h"
#include "scheduler/membership/kv_rendezvous.h"
#include "tests/harness/test_certs.h"

namespace herald::scheduler {
namespace {

class StatusHttp : public ::testing::Test {
 protected:
  StatusHttp() : registry_(absl::Hours(1)), jobs_(&registry_, &kv_, JobManagerOptions{}) {}

  StatusHttpOptions Options() {
    StatusHttpOptions o;
    o.listen = "127.0.0.1:0";
    o.token = "sesame";
    o.chart_js_path = dir_.File("chart.min.js");
    data::testing::WriteFile(o.chart_js_path, "/* chart */");
    return o;
  }

  data::testing::TempDir dir_;
  NodeRegistry registry_;
  KvRendezvous kv_;
  JobManager jobs_;
};

TEST_F(StatusHttp, ThePageAndItsDataNeedTheTokenAsHeaderOrCookie) {
  auto server = StatusHttpServer::Start(Options(), &jobs_, &registry_);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_connection_timeout(5);
  client.set_read_timeout(5);

  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 401);
  EXPECT_NE(page->body.find("action=\"/login\""), std::string::npos) << page->body;
  EXPECT_EQ(client.Get("/api/status")->status, 401);
  EXPECT_EQ(client.Get("/metrics")->status, 401);
  auto chart = client.Get("/chart.js");  // a public library, no secret
  EXPECT_EQ(chart->status, 200);
  EXPECT_EQ(chart->body, "/* chart */");

  auto wrong = client.Post("/login", "token=open", "application/x-www-form-urlencoded");
  EXPECT_EQ(wrong->status, 401);
  EXPECT_NE(wrong->body.find("wrong token"), std::string::npos);
  auto right = client.Post("/login", "token=sesame", "application/x-www-form-urlencoded");
  EXPECT_EQ(right->status, 303);
  const std::string cookie = right->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("herald_token=sesame"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;

  auto with_cookie = client.Get("/", {{"Cookie", "other=1; herald_token=sesame"}});
  EXPECT_EQ(with_cookie->status, 200);
  EXPECT_NE(with_cookie->body.find("<canvas id=\"chart-loss\""), std::string::npos);
  EXPECT_NE(with_cookie->body.find("src=\"/chart.js\""), std::string::npos);
  auto api = client.Get("/api/status", {{"Authorization", "Bearer sesame"}});
  EXPECT_EQ(api->status, 200);
  EXPECT_EQ(api->body.rfind("{\"nodes\":{", 0), 0u) << api->body;
  EXPECT_NE(api->body.find("\"jobs\":{"), std::string::npos) << api->body;
  EXPECT_EQ(client.Get("/api/status", {{"Authorization", "Bearer sesam"}})->status, 401);
  auto metrics = client.Get("/metrics", {{"Authorization", "Bearer sesame"}});
  EXPECT_NE(metrics->body.find("herald_jobs{state=\"JOB_QUEUED\"} 0"), std::string::npos);
}

TEST_F(StatusHttp, WithoutATokenThePageIsOpenAndWithoutChartJsItSaysSo) {
  StatusHttpOptions o = Options();
  o.token.clear();
  o.chart_js_path = dir_.File("missing.js");
  auto server = StatusHttpServer::Start(o, &jobs_, &registry_);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  EXPECT_EQ(client.Get("/")->status, 200);
  EXPECT_EQ(client.Get("/api/status")->status, 200);
  EXPECT_EQ(client.Get("/chart.js")->status, 404);
  EXPECT_EQ(StatusHttpServer::Start({"no-port"}, &jobs_, &registry_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StatusHttp, WithACertificateItServesOnlyHttps) {
  auto certs = testing::MakeTestCerts(dir_.path());
  ASSERT_TRUE(certs.ok()) << certs.status();
  StatusHttpOptions o = Options();
  o.tls_cert_path = certs->server_pem;
  o.tls_key_path = certs->server_key;
  auto server = StatusHttpServer::Start(o, &jobs_, &registry_);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE((*server)->tls());
  httplib::SSLClient tls("127.0.0.1", (*server)->port());
  tls.set_ca_cert_path(certs->ca_pem.c_str());
  tls.enable_server_certificate_verification(true);
  tls.set_connection_timeout(5);
  auto page = tls.Get("/", {{"Authorization", "Bearer sesame"}});
  ASSERT_TRUE(page) << httplib::to_string(page.error());
  EXPECT_EQ(page->status, 200);
  httplib::Client plain("127.0.0.1", (*server)->port());
  plain.set_connection_timeout(5);
  plain.set_read_timeout(5);
  auto refused = plain.Get("/");
  EXPECT_TRUE(!refused || refused->status != 200);

  o.tls_key_path = dir_.File("nothing.key");
  EXPECT_EQ(StatusHttpServer::Start(o, &jobs_, &registry_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace herald::scheduler
