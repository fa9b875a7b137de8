#pragma once
// Request/reply calls over UCX (ucx_worker.h): a server that answers each
// request with a handler on a thread of its own (a cached pool: a request
// that waits, such as a fetch waiting for a commit, never holds up another),
// and a client whose calls wait with a deadline.
//
// Peers find each other by UCX worker address (UcxWorker::Address, handed
// over out of band: a PS registers its address with the scheduler), so UCX
// may use shared memory between processes of one host and TCP or RDMA verbs
// between hosts. With shared memory on (UcxWorker::Options), each side names
// its process (its address, the Hello), so that the other can watch it: a
// peer's death fails its connection at once over every transport. A
// client's first message to a server is its Hello: the cluster token, the
// client's process and its own address; the server connects back and
// answers with a connection id every request then carries. A server with a
// token answers every request of a connection that did not present it with
// UNAUTHENTICATED (counted and logged). UCX traffic is not encrypted: where
// the network is not trusted, use gRPC with TLS.
//
// Errors a call returns: the handler's status (code and message, as the
// handler returned them); DeadlineExceeded or Unavailable naming the server
// when it does not answer in time or its connection fails. Never a hang.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/cached_thread_pool.h"
#include "common/process/process_identity.h"
#include "common/ucx/aligned_buffer.h"
#include "common/ucx/ucx_worker.h"

namespace herald::ucx {

struct RpcServerOptions {
  std::string token;       // empty: no token asked for
  UcxWorker::Options ucx;  // loopback only, shared memory (ucx_worker.h)
};

class UcxRpcServer {
 public:
  // One request's reply payload, or an error sent back as the call's.
  using Handler = std::function<absl::StatusOr<AlignedBuffer>(AlignedBuffer request)>;

  // Errors: Unavailable (UCX cannot initialise).
  static absl::StatusOr<std::unique_ptr<UcxRpcServer>> Start(const RpcServerOptions& options,
                                                             Handler handler);
  // Stops: waits for the handlers running, then closes every connection.
  ~UcxRpcServer();

  // What clients connect to: "ucx:" and the worker address in hex, then
  // with shared memory on, "@" and this process (EncodeAddress).
  const std::string& address() const { return address_; }
  // Waits up to `timeout` until the server holds `n` client connections
  // (a client that failed or whose process exited is dropped); false at
  // the timeout.
  bool WaitForConnections(size_t n, absl::Duration timeout);
  // Whether connection `id` (the Header::connection of its requests) may
  // use shared memory; false for an unknown one.
  bool SharedMemory(uint32_t id);
  // Requests refused for want of the token.
  uint64_t refused() const { return refused_.load(); }

 private:
  struct Connection {
    ucp_ep_h ep = nullptr;
    bool authorized = false;
  };
  UcxRpcServer(RpcServerOptions options, Handler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {}
  void OnMessage(MessageId id, const Header& header, AlignedBuffer payload);
  // Connects back to a client that said Hello and answers it.
  void Welcome(const Header& header, const AlignedBuffer& hello);
  void OnEndpointError(ucp_ep_h ep);

  const RpcServerOptions options_;
  const Handler handler_;
  std::string address_;
  std::atomic<uint64_t> refused_{0};
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<uint32_t, Connection> connections_ ABSL_GUARDED_BY(mu_);
  uint32_t next_connection_ ABSL_GUARDED_BY(mu_) = 1;
  // Declared last: destroyed first. The pool's destructor waits for the
  // handlers; the worker's then closes the connections.
  std::unique_ptr<UcxWorker> worker_;
  std::unique_ptr<CachedThreadPool> pool_;
};

class UcxRpcClient {
 public:
  // Connects to every server address (UcxRpcServer::address()) and
  // presents `token`, waiting up to `timeout` for each answer. `names`
  // (same size) name the servers in errors. Errors: InvalidArgument (an
  // address that does not parse), Unavailable naming a server that does not
  // answer, Unauthenticated naming one that refuses the token.
  static absl::StatusOr<std::unique_ptr<UcxRpcClient>> Connect(
      const std::vector<std::string>& addresses, const std::vector<std::string>& names,
      const std::string& token, absl::Duration timeout, const UcxWorker::Options& ucx);
  ~UcxRpcClient();

  size_t num_servers() const { return num_servers_; }
  // Sends `request` to server `index` and waits up to `timeout` for the
  // reply. Thread-safe; calls run concurrently.
  absl::StatusOr<AlignedBuffer> Call(size_t index, AlignedBuffer request, absl::Duration timeout);
  // Call in two halves: Start sends `request` to server `index` and returns
  // the call's id at once (errors: Call's before anything is sent); Wait
  // waits up to `timeout` for that call's reply, once. Forget gives a call
  // up without waiting (its reply, if one comes, is dropped). Thread-safe.
  absl::StatusOr<uint64_t> Start(size_t index, AlignedBuffer request);
  absl::StatusOr<AlignedBuffer> Wait(uint64_t id, absl::Duration timeout);
  void Forget(uint64_t id);
  // The transports UCX chose for server `index` (for the log).
  std::string Describe(size_t index);
  // Whether the connection to server `index` failed (a dead peer); *why
  // says how.
  bool Failed(size_t index, std::string* why);
  // Whether the connection to server `index` may use shared memory.
  bool SharedMemory(size_t index);
  // Fails every call in flight, and every later one, with Cancelled(why):
  // for a caller whose work was called off.
  void CancelAll(const std::string& why);

 private:
  struct Server {
    std::string name;
    ucp_ep_h ep = nullptr;
    uint32_t connection = 0;  // the server's id for us, from its Hello reply
    bool failed = false;
    std::string why;  // the connection's failure
  };
  struct Pending {
    size_t server = 0;
    bool done = false;
    absl::Status status;
    Header header;
    AlignedBuffer reply;
  };
  UcxRpcClient() = default;
  void OnMessage(MessageId id, const Header& header, AlignedBuffer payload);
  void OnEndpointError(ucp_ep_h ep, const std::string& why);
  // Sends `payload` as `kind` to server `index` and waits for its answer:
  // SendExchange, then AwaitExchange.
  absl::StatusOr<Pending> Exchange(size_t index, MessageId kind, AlignedBuffer payload,
                                   absl::Duration timeout);
  absl::StatusOr<uint64_t> SendExchange(size_t index, MessageId kind, AlignedBuffer payload);
  absl::StatusOr<Pending> AwaitExchange(uint64_t id, absl::Duration timeout);

  size_t num_servers_ = 0;
  absl::Mutex mu_;
  std::vector<Server> servers_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::string cancelled_ ABSL_GUARDED_BY(mu_);  // CancelAll's reason, once called
  std::unique_ptr<UcxWorker> worker_;           // last: its thread stops first
};

// Where a server is: its worker address, and its process where the server
// offers shared memory to the processes of its host (UcxWorker::Options).
struct PeerAddress {
  std::string worker;
  std::optional<ProcessIdentity> process;
};
// "ucx:" + hex of the worker address, then "@" + the process
// (ProcessIdentity::Encode) where given and valid; and back. Errors:
// InvalidArgument naming what does not parse.
std::string EncodeAddress(const std::string& worker_address,
                          const ProcessIdentity& process = ProcessIdentity{});
absl::StatusOr<PeerAddress> DecodeAddress(const std::string& address);

}  // namespace herald::ucx
