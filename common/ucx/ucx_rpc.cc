#include "common/ucx/ucx_rpc.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status.h"

namespace herald::ucx {
namespace {

AlignedBuffer BytesOf(const std::string& s) { return AlignedBuffer::CopyOf(s.data(), s.size()); }

std::string StringOf(const AlignedBuffer& b) { return std::string(b.data(), b.size()); }

absl::StatusOr<std::pair<std::string, int>> SplitAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("UCX address \"", address, "\": expected HOST:PORT"));
  }
  return std::make_pair(address.substr(0, colon), port);
}

bool IsLoopback(const std::string& host_or_address) {
  return absl::StartsWith(host_or_address, "127.");
}

}  // namespace

// ---------------------------------------------------------------- server

absl::StatusOr<std::unique_ptr<UcxRpcServer>> UcxRpcServer::Start(const RpcServerOptions& options,
                                                                  Handler handler) {
  std::unique_ptr<UcxRpcServer> server(new UcxRpcServer(options, std::move(handler)));
  UcxRpcServer* self = server.get();
  server->pool_ = std::make_unique<CachedThreadPool>();
  HERALD_ASSIGN_OR_RETURN(
      server->worker_,
      UcxWorker::Create(
          [self](MessageId id, ucp_ep_h from, const Header& header, AlignedBuffer payload) {
            self->OnMessage(id, from, header, std::move(payload));
          },
          [self](ucp_ep_h ep, const std::string&) { self->OnEndpointError(ep); },
          IsLoopback(options.host)));
  HERALD_ASSIGN_OR_RETURN(server->port_, server->worker_->Listen(options.host, options.port));
  return server;
}

UcxRpcServer::~UcxRpcServer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // no new handler starts
  }
  pool_.reset();
  worker_.reset();
}

void UcxRpcServer::OnEndpointError(ucp_ep_h ep) {
  absl::MutexLock lock(&mu_);
  authorized_.erase(ep);
}

void UcxRpcServer::OnMessage(MessageId id, ucp_ep_h from, const Header& header,
                             AlignedBuffer payload) {
  if (from == nullptr) return;  // no way to answer
  Header reply;
  reply.request_id = header.request_id;
  if (id == kHello) {
    const bool ok = options_.token.empty() || StringOf(payload) == options_.token;
    {
      absl::MutexLock lock(&mu_);
      authorized_[from] = ok;
    }
    if (!ok) {
      ++refused_;
      HLOG_WARN("UCX: a connection presented a wrong cluster token; its requests are refused");
    }
    reply.code =
        static_cast<int32_t>(ok ? absl::StatusCode::kOk : absl::StatusCode::kUnauthenticated);
    worker_->Send(from, kHelloReply, reply, AlignedBuffer());
    return;
  }
  if (id != kRequest) return;
  bool authorized;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    auto it = authorized_.find(from);
    authorized = it != authorized_.end() && it->second;
  }
  if (!authorized) {
    ++refused_;
    reply.code = static_cast<int32_t>(absl::StatusCode::kUnauthenticated);
    worker_->Send(from, kReply, reply,
                  BytesOf("UCX: this connection did not present the cluster token"));
    return;
  }
  pool_->Run([this, from, reply, request = std::make_shared<AlignedBuffer>(std::move(payload))] {
    absl::StatusOr<AlignedBuffer> result = handler_(std::move(*request));
    Header h = reply;
    if (result.ok()) {
      worker_->Send(from, kReply, h, std::move(*result));
    } else {
      h.code = static_cast<int32_t>(result.status().code());
      worker_->Send(from, kReply, h, BytesOf(std::string(result.status().message())));
    }
  });
}

// ---------------------------------------------------------------- client

absl::StatusOr<std::unique_ptr<UcxRpcClient>> UcxRpcClient::Connect(
    const std::vector<std::string>& servers, const std::string& token, absl::Duration timeout) {
  std::unique_ptr<UcxRpcClient> client(new UcxRpcClient());
  UcxRpcClient* self = client.get();
  HERALD_ASSIGN_OR_RETURN(
      client->worker_,
      UcxWorker::Create(
          [self](MessageId id, ucp_ep_h from, const Header& header, AlignedBuffer payload) {
            self->OnMessage(id, from, header, std::move(payload));
          },
          [self](ucp_ep_h ep, const std::string& why) { self->OnEndpointError(ep, why); },
          std::all_of(servers.begin(), servers.end(), IsLoopback)));
  for (const std::string& address : servers) {
    HERALD_ASSIGN_OR_RETURN(auto host_port, SplitAddress(address));
    HERALD_ASSIGN_OR_RETURN(ucp_ep_h ep,
                            client->worker_->Connect(host_port.first, host_port.second));
    absl::MutexLock lock(&client->mu_);
    client->servers_.push_back({address, ep, false, ""});
  }
  for (size_t s = 0; s < servers.size(); ++s) {
    absl::StatusOr<AlignedBuffer> hello = client->Exchange(s, kHello, BytesOf(token), timeout);
    if (!hello.ok()) {
      return absl::Status(hello.status().code(), absl::StrCat("UCX hello to ", servers[s], ": ",
                                                              hello.status().message()));
    }
  }
  return client;
}

UcxRpcClient::~UcxRpcClient() { worker_.reset(); }

void UcxRpcClient::OnEndpointError(ucp_ep_h ep, const std::string& why) {
  absl::MutexLock lock(&mu_);
  for (size_t s = 0; s < servers_.size(); ++s) {
    if (servers_[s].ep != ep) continue;
    servers_[s].failed = true;
    servers_[s].why = why;
    for (auto& [id, p] : pending_) {
      if (p.server != s || p.done) continue;
      p.done = true;
      p.status = absl::UnavailableError(
          absl::StrCat("UCX connection to ", servers_[s].address, " failed: ", why));
    }
  }
}

void UcxRpcClient::OnMessage(MessageId id, ucp_ep_h, const Header& header, AlignedBuffer payload) {
  if (id != kReply && id != kHelloReply) return;
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(header.request_id);
  if (it == pending_.end() || it->second.done) return;  // the caller gave up
  Pending& p = it->second;
  p.done = true;
  const auto code = static_cast<absl::StatusCode>(header.code);
  if (code == absl::StatusCode::kOk) {
    p.reply = std::move(payload);
  } else {
    p.status = absl::Status(code, StringOf(payload));
  }
}

absl::StatusOr<AlignedBuffer> UcxRpcClient::Exchange(size_t index, MessageId kind,
                                                     AlignedBuffer payload,
                                                     absl::Duration timeout) {
  uint64_t id;
  ucp_ep_h ep;
  std::string address;
  {
    absl::MutexLock lock(&mu_);
    if (index >= servers_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("UCX: no server ", index));
    }
    const Server& s = servers_[index];
    if (s.failed) {
      return absl::UnavailableError(
          absl::StrCat("UCX connection to ", s.address, " failed: ", s.why));
    }
    id = next_id_++;
    ep = s.ep;
    address = s.address;
    pending_[id].server = index;
  }
  Header header;
  header.request_id = id;
  worker_->Send(ep, kind, header, std::move(payload), [this, id](absl::Status sent) {
    if (sent.ok()) return;
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second.done) return;
    it->second.done = true;
    it->second.status = sent;
  });
  absl::MutexLock lock(&mu_);
  auto done = [this, id]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return pending_.at(id).done; };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout)) {
    pending_.erase(id);  // a late reply is dropped
    return absl::DeadlineExceededError(absl::StrCat("UCX call to ", address, ": no answer within ",
                                                    absl::FormatDuration(timeout)));
  }
  Pending p = std::move(pending_.at(id));
  pending_.erase(id);
  if (!p.status.ok()) return p.status;
  return std::move(p.reply);
}

absl::StatusOr<AlignedBuffer> UcxRpcClient::Call(size_t index, AlignedBuffer request,
                                                 absl::Duration timeout) {
  return Exchange(index, kRequest, std::move(request), timeout);
}

std::string UcxRpcClient::Describe(size_t index) {
  ucp_ep_h ep;
  {
    absl::MutexLock lock(&mu_);
    if (index >= servers_.size() || servers_[index].failed) return "";
    ep = servers_[index].ep;
  }
  return worker_->Describe(ep);
}

}  // namespace herald::ucx
