#include "common/ucx/ucx_rpc.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status.h"

namespace herald::ucx {
namespace {

constexpr char kAddressPrefix[] = "ucx:";

AlignedBuffer BytesOf(const std::string& s) { return AlignedBuffer::CopyOf(s.data(), s.size()); }

std::string StringOf(const AlignedBuffer& b) { return std::string(b.data(), b.size()); }

// Hello: u32 token length, the token, u32 length of the client's process
// (ProcessIdentity::Encode; empty: not offered), the process, then the
// client's worker address.
AlignedBuffer EncodeHello(const std::string& token, const std::string& process,
                          const std::string& address) {
  std::string bytes;
  for (const std::string* field : {&token, &process}) {
    const uint32_t n = static_cast<uint32_t>(field->size());
    bytes.append(reinterpret_cast<const char*>(&n), 4);
    bytes += *field;
  }
  bytes += address;
  return BytesOf(bytes);
}

bool DecodeHello(const AlignedBuffer& hello, std::string* token,
                 std::optional<ProcessIdentity>* process, std::string* address) {
  size_t at = 0;
  std::string fields[2];
  for (std::string& field : fields) {
    uint32_t n = 0;
    if (hello.size() - at < 4) return false;
    std::memcpy(&n, hello.data() + at, 4);
    at += 4;
    if (n > hello.size() - at) return false;
    field.assign(hello.data() + at, n);
    at += n;
  }
  *token = std::move(fields[0]);
  process->reset();
  if (!fields[1].empty()) {
    *process = ProcessIdentity::Decode(fields[1]);
    if (!process->has_value()) return false;
  }
  *address = std::string(hello.data() + at, hello.size() - at);
  return !address->empty();
}

// This process, where its UCX worker offers shared memory; empty otherwise.
ProcessIdentity OfferedProcess(const UcxWorker::Options& ucx) {
  return ucx.shared_memory ? ProcessIdentity::Self() : ProcessIdentity{};
}

}  // namespace

std::string EncodeAddress(const std::string& worker_address, const ProcessIdentity& process) {
  std::string out = absl::StrCat(kAddressPrefix, absl::BytesToHexString(worker_address));
  if (process.valid()) absl::StrAppend(&out, "@", process.Encode());
  return out;
}

absl::StatusOr<PeerAddress> DecodeAddress(const std::string& address) {
  const size_t at = address.find('@');
  const std::string hex = address.substr(
      std::min(address.size(), sizeof(kAddressPrefix) - 1),
      at == std::string::npos ? std::string::npos : at - (sizeof(kAddressPrefix) - 1));
  if (!absl::StartsWith(address, kAddressPrefix) || hex.empty() || hex.size() % 2 != 0 ||
      hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("UCX address \"", address.substr(0, 40),
                                                   "\": expected ucx:HEX or ucx:HEX@PROCESS"));
  }
  PeerAddress peer{absl::HexStringToBytes(hex), std::nullopt};
  if (at != std::string::npos) {
    peer.process = ProcessIdentity::Decode(address.substr(at + 1));
    if (!peer.process) {
      return absl::InvalidArgumentError(
          absl::StrCat("UCX address: the process after '@' (\"", address.substr(at + 1, 80),
                       "\") is not BOOT_ID/PID_NS/IPC_NS/NET_NS/PID/START_TIME"));
    }
  }
  return peer;
}

// ---------------------------------------------------------------- server

absl::StatusOr<std::unique_ptr<UcxRpcServer>> UcxRpcServer::Start(const RpcServerOptions& options,
                                                                  Handler handler) {
  std::unique_ptr<UcxRpcServer> server(new UcxRpcServer(options, std::move(handler)));
  UcxRpcServer* self = server.get();
  server->pool_ = std::make_unique<CachedThreadPool>("ucx-serve");
  HERALD_ASSIGN_OR_RETURN(
      server->worker_,
      UcxWorker::Create(
          [self](MessageId id, const Header& header, AlignedBuffer payload) {
            self->OnMessage(id, header, std::move(payload));
          },
          [self](ucp_ep_h ep, const std::string&) { self->OnEndpointError(ep); }, options.ucx));
  HERALD_ASSIGN_OR_RETURN(std::string address, server->worker_->Address());
  server->address_ = EncodeAddress(address, OfferedProcess(options.ucx));
  return server;
}

bool UcxRpcServer::WaitForConnections(size_t n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, n]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return connections_.size() == n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

bool UcxRpcServer::SharedMemory(uint32_t id) {
  ucp_ep_h ep;
  {
    absl::MutexLock lock(&mu_);
    auto it = connections_.find(id);
    if (it == connections_.end()) return false;
    ep = it->second.ep;
  }
  return worker_->SharedMemory(ep);
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
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (it->second.ep == ep) {
      connections_.erase(it);
      return;
    }
  }
}

void UcxRpcServer::Welcome(const Header& header, const AlignedBuffer& hello) {
  std::string token, address;
  std::optional<ProcessIdentity> process;
  if (!DecodeHello(hello, &token, &process, &address)) {
    HLOG_WARN("UCX: a malformed hello ({} bytes) ignored", hello.size());
    return;
  }
  absl::StatusOr<ucp_ep_h> ep = worker_->Connect(address, process ? &*process : nullptr);
  if (!ep.ok()) {
    HLOG_WARN("UCX: cannot connect back to a client: {}", std::string(ep.status().message()));
    return;
  }
  const bool ok = options_.token.empty() || token == options_.token;
  Header reply;
  reply.request_id = header.request_id;
  reply.code =
      static_cast<int32_t>(ok ? absl::StatusCode::kOk : absl::StatusCode::kUnauthenticated);
  {
    absl::MutexLock lock(&mu_);
    reply.connection = next_connection_++;
    connections_[reply.connection] = {*ep, ok};
  }
  if (!ok) {
    ++refused_;
    HLOG_WARN("UCX: a client presented a wrong cluster token; its requests are refused");
  }
  worker_->Send(*ep, kHelloReply, reply, AlignedBuffer());
}

void UcxRpcServer::OnMessage(MessageId id, const Header& header, AlignedBuffer payload) {
  if (id != kHello && id != kRequest) return;
  Connection connection;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    if (id == kRequest) {
      auto it = connections_.find(header.connection);
      if (it == connections_.end()) return;  // no way to answer (a client that did not say Hello)
      connection = it->second;
    }
  }
  auto request = std::make_shared<AlignedBuffer>(std::move(payload));
  if (id == kHello) {  // connecting back may wait: not on the progress thread
    pool_->Run([this, header, request] { Welcome(header, *request); });
    return;
  }
  Header reply;
  reply.request_id = header.request_id;
  if (!connection.authorized) {
    ++refused_;
    reply.code = static_cast<int32_t>(absl::StatusCode::kUnauthenticated);
    worker_->Send(connection.ep, kReply, reply,
                  BytesOf("UCX: this connection did not present the cluster token"));
    return;
  }
  pool_->Run([this, ep = connection.ep, reply, request] {
    absl::StatusOr<AlignedBuffer> result = handler_(std::move(*request));
    Header h = reply;
    if (result.ok()) {
      worker_->Send(ep, kReply, h, std::move(*result));
    } else {
      h.code = static_cast<int32_t>(result.status().code());
      worker_->Send(ep, kReply, h, BytesOf(std::string(result.status().message())));
    }
  });
}

// ---------------------------------------------------------------- client

absl::StatusOr<std::unique_ptr<UcxRpcClient>> UcxRpcClient::Connect(
    const std::vector<std::string>& addresses, const std::vector<std::string>& names,
    const std::string& token, absl::Duration timeout, const UcxWorker::Options& ucx) {
  if (names.size() != addresses.size()) {
    return absl::InvalidArgumentError("UCX: one name per server address");
  }
  std::unique_ptr<UcxRpcClient> client(new UcxRpcClient());
  UcxRpcClient* self = client.get();
  HERALD_ASSIGN_OR_RETURN(
      client->worker_,
      UcxWorker::Create(
          [self](MessageId id, const Header& header, AlignedBuffer payload) {
            self->OnMessage(id, header, std::move(payload));
          },
          [self](ucp_ep_h ep, const std::string& why) { self->OnEndpointError(ep, why); }, ucx));
  HERALD_ASSIGN_OR_RETURN(const std::string own, client->worker_->Address());
  const ProcessIdentity process = OfferedProcess(ucx);
  for (size_t s = 0; s < addresses.size(); ++s) {
    absl::StatusOr<PeerAddress> address = DecodeAddress(addresses[s]);
    if (!address.ok()) return Annotate(address.status(), names[s]);
    absl::StatusOr<ucp_ep_h> ep =
        client->worker_->Connect(address->worker, address->process ? &*address->process : nullptr);
    if (!ep.ok()) return Annotate(ep.status(), names[s]);
    absl::MutexLock lock(&client->mu_);
    client->servers_.push_back({names[s], *ep, 0, false, ""});
  }
  client->num_servers_ = addresses.size();
  for (size_t s = 0; s < addresses.size(); ++s) {
    absl::StatusOr<Pending> hello = client->Exchange(
        s, kHello, EncodeHello(token, process.valid() ? process.Encode() : "", own), timeout);
    if (!hello.ok()) return Annotate(hello.status(), absl::StrCat("UCX hello to ", names[s]));
    if (!hello->status.ok()) {
      return absl::Status(hello->status.code(), absl::StrCat("UCX hello to ", names[s],
                                                             ": the cluster token was refused"));
    }
    absl::MutexLock lock(&client->mu_);
    client->servers_[s].connection = hello->header.connection;
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
          absl::StrCat("UCX connection to ", servers_[s].name, " failed: ", why));
    }
  }
}

void UcxRpcClient::OnMessage(MessageId id, const Header& header, AlignedBuffer payload) {
  if (id != kReply && id != kHelloReply) return;
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(header.request_id);
  if (it == pending_.end() || it->second.done) return;  // the caller gave up
  Pending& p = it->second;
  p.done = true;
  p.header = header;
  const auto code = static_cast<absl::StatusCode>(header.code);
  if (code == absl::StatusCode::kOk) {
    p.reply = std::move(payload);
  } else {
    p.status = absl::Status(code, StringOf(payload));
  }
}

absl::StatusOr<UcxRpcClient::Pending> UcxRpcClient::Exchange(size_t index, MessageId kind,
                                                             AlignedBuffer payload,
                                                             absl::Duration timeout) {
  HERALD_ASSIGN_OR_RETURN(uint64_t id, SendExchange(index, kind, std::move(payload)));
  return AwaitExchange(id, timeout);
}

absl::StatusOr<uint64_t> UcxRpcClient::SendExchange(size_t index, MessageId kind,
                                                    AlignedBuffer payload) {
  Header header;
  ucp_ep_h ep;
  {
    absl::MutexLock lock(&mu_);
    if (index >= servers_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("UCX: no server ", index));
    }
    const Server& s = servers_[index];
    if (!cancelled_.empty()) return absl::CancelledError(cancelled_);
    if (s.failed) {
      return absl::UnavailableError(absl::StrCat("UCX connection to ", s.name, " failed: ", s.why));
    }
    header.request_id = next_id_++;
    header.connection = s.connection;
    ep = s.ep;
    pending_[header.request_id].server = index;
  }
  const uint64_t id = header.request_id;
  worker_->Send(ep, kind, header, std::move(payload), [this, id](absl::Status sent) {
    if (sent.ok()) return;
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second.done) return;
    it->second.done = true;
    it->second.status = sent;
  });
  return id;
}

absl::StatusOr<UcxRpcClient::Pending> UcxRpcClient::AwaitExchange(uint64_t id,
                                                                  absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (pending_.find(id) == pending_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("UCX: no call ", id, " in flight"));
  }
  auto done = [this, id]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return pending_.at(id).done; };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout)) {
    const std::string name = servers_[pending_.at(id).server].name;
    pending_.erase(id);  // a late reply is dropped
    return absl::DeadlineExceededError(
        absl::StrCat("UCX call to ", name, ": no answer within ", absl::FormatDuration(timeout)));
  }
  Pending p = std::move(pending_.at(id));
  pending_.erase(id);
  return p;
}

absl::StatusOr<AlignedBuffer> UcxRpcClient::Call(size_t index, AlignedBuffer request,
                                                 absl::Duration timeout) {
  HERALD_ASSIGN_OR_RETURN(uint64_t id, Start(index, std::move(request)));
  return Wait(id, timeout);
}

absl::StatusOr<uint64_t> UcxRpcClient::Start(size_t index, AlignedBuffer request) {
  return SendExchange(index, kRequest, std::move(request));
}

absl::StatusOr<AlignedBuffer> UcxRpcClient::Wait(uint64_t id, absl::Duration timeout) {
  HERALD_ASSIGN_OR_RETURN(Pending p, AwaitExchange(id, timeout));
  if (!p.status.ok()) return p.status;
  return std::move(p.reply);
}

void UcxRpcClient::Forget(uint64_t id) {
  absl::MutexLock lock(&mu_);
  pending_.erase(id);
}

bool UcxRpcClient::Failed(size_t index, std::string* why) {
  absl::MutexLock lock(&mu_);
  if (index >= servers_.size() || !servers_[index].failed) return false;
  *why = servers_[index].why;
  return true;
}

bool UcxRpcClient::SharedMemory(size_t index) {
  ucp_ep_h ep;
  {
    absl::MutexLock lock(&mu_);
    if (index >= servers_.size() || servers_[index].failed) return false;
    ep = servers_[index].ep;
  }
  return worker_->SharedMemory(ep);
}

void UcxRpcClient::CancelAll(const std::string& why) {
  absl::MutexLock lock(&mu_);
  cancelled_ = why.empty() ? "cancelled" : why;
  for (auto& [id, p] : pending_) {
    if (p.done) continue;
    p.done = true;
    p.status = absl::CancelledError(cancelled_);
  }
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
