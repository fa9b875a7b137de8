#pragma once
// Request/reply calls over UCX (ucx_worker.h): a server that answers each
// request with a handler on a thread of its own (a cached pool: a request
// that waits, such as a fetch waiting for a commit, never holds up another),
// and a client whose calls wait with a deadline.
//
// The first message on a connection is the client's Hello with the cluster
// token. A server with a token answers every request of a connection that
// did not present it with UNAUTHENTICATED (counted and logged). UCX traffic
// is not encrypted: where the network is not trusted, use gRPC with TLS.
//
// Errors a call returns: the handler's status (code and message, as the
// handler returned them); DeadlineExceeded or Unavailable naming the server
// when it does not answer in time or its connection fails. Never a hang.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/cached_thread_pool.h"
#include "common/ucx/aligned_buffer.h"
#include "common/ucx/ucx_worker.h"

namespace herald::ucx {

struct RpcServerOptions {
  std::string host = "127.0.0.1";  // an IPv4 address of this host
  int port = 0;                    // 0: picked (see port())
  std::string token;               // empty: no token asked for
};

class UcxRpcServer {
 public:
  // One request's reply payload, or an error sent back as the call's.
  using Handler = std::function<absl::StatusOr<AlignedBuffer>(AlignedBuffer request)>;

  // Errors: Unavailable (UCX cannot initialise or listen there).
  static absl::StatusOr<std::unique_ptr<UcxRpcServer>> Start(const RpcServerOptions& options,
                                                             Handler handler);
  // Stops: waits for the handlers running, then closes every connection.
  ~UcxRpcServer();

  int port() const { return port_; }
  // Requests refused for want of the token.
  uint64_t refused() const { return refused_.load(); }

 private:
  UcxRpcServer(RpcServerOptions options, Handler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {}
  void OnMessage(MessageId id, ucp_ep_h from, const Header& header, AlignedBuffer payload);
  void OnEndpointError(ucp_ep_h ep);

  const RpcServerOptions options_;
  const Handler handler_;
  int port_ = 0;
  std::atomic<uint64_t> refused_{0};
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<ucp_ep_h, bool> authorized_ ABSL_GUARDED_BY(mu_);  // connections that said Hello
  // Declared last: destroyed first. The pool's destructor waits for the
  // handlers; the worker's then closes the connections.
  std::unique_ptr<UcxWorker> worker_;
  std::unique_ptr<CachedThreadPool> pool_;
};

class UcxRpcClient {
 public:
  // Connects to every "host:port" of `servers` and presents `token`,
  // waiting up to `timeout` for each answer. Errors: InvalidArgument (an
  // address that does not parse), Unavailable naming a server that does not
  // answer, Unauthenticated naming one that refuses the token.
  static absl::StatusOr<std::unique_ptr<UcxRpcClient>> Connect(
      const std::vector<std::string>& servers, const std::string& token, absl::Duration timeout);
  ~UcxRpcClient();

  size_t num_servers() const { return servers_.size(); }
  // Sends `request` to server `index` and waits up to `timeout` for the
  // reply. Thread-safe; calls run concurrently.
  absl::StatusOr<AlignedBuffer> Call(size_t index, AlignedBuffer request, absl::Duration timeout);
  // The transports UCX chose for server `index` (for the log).
  std::string Describe(size_t index);

 private:
  struct Server {
    std::string address;
    ucp_ep_h ep = nullptr;
    bool failed = false;
    std::string why;  // the connection's failure
  };
  struct Pending {
    size_t server = 0;
    bool done = false;
    absl::Status status;
    AlignedBuffer reply;
  };
  UcxRpcClient() = default;
  void OnMessage(MessageId id, ucp_ep_h from, const Header& header, AlignedBuffer payload);
  void OnEndpointError(ucp_ep_h ep, const std::string& why);
  // Sends and waits for the answer to request `id` (registered in pending_).
  absl::StatusOr<AlignedBuffer> Exchange(size_t index, MessageId kind, AlignedBuffer payload,
                                         absl::Duration timeout);

  absl::Mutex mu_;
  std::vector<Server> servers_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::unique_ptr<UcxWorker> worker_;  // last: its thread stops first
};

}  // namespace herald::ucx
