#pragma once
// One UCX (OpenUCX) context and worker, driven by a progress thread of its
// own, exchanging whole messages as active messages between endpoints.
// UCX picks the transport per endpoint: shared memory between processes of
// one host, TCP elsewhere here, InfiniBand/RoCE verbs (zero-copy rendezvous)
// where the cluster has them; UCX_TLS and UCX_NET_DEVICES restrict it
// (docs/operations.md).
//
// Every message is an active message with a fixed header (Header) and a
// payload of any size: small payloads arrive eagerly and are copied once
// into an AlignedBuffer, large ones by rendezvous straight into one.
// Delivery callbacks run on the progress thread and must not block.
// Thread-safe: Send and Connect may be called from any thread
// (the worker runs in UCS_THREAD_MODE_MULTI).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/process/process_watch.h"
#include "common/ucx/aligned_buffer.h"

// UCX's handles (ucp/api/ucp_def.h), kept out of this header.
typedef struct ucp_context* ucp_context_h;
typedef struct ucp_worker* ucp_worker_h;
typedef struct ucp_ep* ucp_ep_h;

namespace herald::ucx {

// The header every message carries.
struct Header {
  uint64_t request_id = 0;
  int32_t code = 0;         // absl::StatusCode of a reply
  uint32_t connection = 0;  // the sender's connection id at the receiver (ucx_rpc.h)
};

// Message kinds (active message ids).
enum MessageId : unsigned {
  kHello = 1,       // client -> server: the cluster token and the client's address
  kHelloReply = 2,  // server -> client: code OK or UNAUTHENTICATED, the connection id
  kRequest = 3,
  kReply = 4,
};

class UcxWorker {
 public:
  // A whole message. On the progress thread; must not block.
  using OnMessage = std::function<void(MessageId id, const Header& header, AlignedBuffer payload)>;
  // An endpoint failed (its peer died or the connection broke); it is
  // closed after this returns. On the progress thread.
  using OnEndpointError = std::function<void(ucp_ep_h ep, const std::string& why)>;

  struct Options {
    // Every peer is a process of this host: the loopback interface only
    // (UCX_NET_DEVICES=lo unless the environment sets UCX_NET_DEVICES).
    bool loopback_only = false;
    // Let endpoints to processes of this host use shared memory (posix,
    // sysv, cma). UCX 1.13's shared-memory transports cannot report a dead
    // peer, so such an endpoint does not ask UCX for it: the peer's process
    // is watched instead (ProcessWatch), and its exit fails the endpoint at
    // once (OnEndpointError), as TCP and verbs do. Where the peer's process
    // cannot be watched (unknown, another host or namespace, no pidfd), the
    // endpoint uses TCP or verbs. Off: TCP or verbs for every endpoint.
    bool shared_memory = false;
  };
  // Errors: Unavailable when UCX cannot initialise.
  static absl::StatusOr<std::unique_ptr<UcxWorker>> Create(OnMessage on_message,
                                                           OnEndpointError on_error,
                                                           const Options& options);
  // Stops the progress thread and closes every endpoint and the listener.
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  // This worker's UCX address: every transport it can be reached on (shared
  // memory for processes of this host, TCP or verbs for others), as opaque
  // bytes to hand to peers out of band (a PS registers it with the
  // scheduler). Errors: Unavailable.
  absl::StatusOr<std::string> Address();
  // An endpoint to the worker whose Address() is `address` (UCX picks the
  // best transport both share; the connection completes in the background
  // and messages sent meanwhile wait for it). The peer answers on the
  // endpoint UCX makes on its side. `peer`: the peer's process where known
  // (shared memory needs it, see Options). Errors: Unavailable.
  absl::StatusOr<ucp_ep_h> Connect(const std::string& address,
                                   const ProcessIdentity* peer = nullptr);
  // Whether `ep` may use shared memory (its peer's process is watched).
  bool SharedMemory(ucp_ep_h ep);

  // Sends `payload` to `ep`. `done` (may be empty) runs once, on the
  // progress thread or in this call, with the outcome.
  void Send(ucp_ep_h ep, MessageId id, const Header& header, AlignedBuffer payload,
            std::function<void(absl::Status)> done = {});

  // The transports UCX selected for `ep` (one line per lane), for the log.
  std::string Describe(ucp_ep_h ep);

 private:
  struct Internals;  // the progress thread's state and UCX's callbacks (.cc)
  UcxWorker(OnMessage on_message, OnEndpointError on_error);
  absl::Status Init(const Options& options);
  void Progress();
  // Fails `ep` (its peer is gone): on_error_, then closed after progress
  // returns. On the progress thread.
  void Fail(ucp_ep_h ep, const std::string& why);

  const OnMessage on_message_;
  const OnEndpointError on_error_;
  const std::unique_ptr<Internals> internals_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int wakeup_fd_ = -1;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Open endpoints, closed at the end, with the id of their peer's
  // process watch (0: none, UCX reports a dead peer itself).
  std::map<ucp_ep_h, uint64_t> endpoints_ ABSL_GUARDED_BY(mu_);
  // Options::shared_memory: the peers' processes (null otherwise).
  std::unique_ptr<ProcessWatch> watch_;
};

}  // namespace herald::ucx
