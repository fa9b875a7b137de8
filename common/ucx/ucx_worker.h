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
// Thread-safe: Send, Connect and Listen may be called from any thread
// (the worker runs in UCS_THREAD_MODE_MULTI).

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/ucx/aligned_buffer.h"

// UCX's handles (ucp/api/ucp_def.h), kept out of this header.
typedef struct ucp_context* ucp_context_h;
typedef struct ucp_worker* ucp_worker_h;
typedef struct ucp_ep* ucp_ep_h;
typedef struct ucp_listener* ucp_listener_h;

namespace herald::ucx {

// The header every message carries.
struct Header {
  uint64_t request_id = 0;
  int32_t code = 0;  // absl::StatusCode of a reply
  uint32_t reserved = 0;
};

// Message kinds (active message ids).
enum MessageId : unsigned {
  kHello = 1,       // client -> server: the cluster token
  kHelloReply = 2,  // server -> client: code OK or UNAUTHENTICATED
  kRequest = 3,
  kReply = 4,
};

class UcxWorker {
 public:
  // A whole message from `from`. On the progress thread; must not block.
  using OnMessage =
      std::function<void(MessageId id, ucp_ep_h from, const Header& header, AlignedBuffer payload)>;
  // An endpoint failed (its peer died or the connection broke); it is
  // closed after this returns. On the progress thread.
  using OnEndpointError = std::function<void(ucp_ep_h ep, const std::string& why)>;

  // `loopback_only`: every peer is on 127.0.0.0/8, so UCX uses the
  // loopback interface and shared memory only (UCX_NET_DEVICES=lo unless
  // the environment sets UCX_NET_DEVICES). Errors: Unavailable when UCX
  // cannot initialise (no usable transport).
  static absl::StatusOr<std::unique_ptr<UcxWorker>> Create(OnMessage on_message,
                                                           OnEndpointError on_error,
                                                           bool loopback_only);
  // Stops the progress thread and closes every endpoint and the listener.
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  // Accepts connections on host:port (port 0: one is picked). Returns the
  // port. Errors: Unavailable naming the address.
  absl::StatusOr<int> Listen(const std::string& host, int port);
  // An endpoint to a listening worker at host:port (the connection completes
  // in the background; messages sent meanwhile wait for it). Errors:
  // Unavailable naming the address.
  absl::StatusOr<ucp_ep_h> Connect(const std::string& host, int port);

  // Sends `payload` to `ep`. `done` (may be empty) runs once, on the
  // progress thread or in this call, with the outcome.
  void Send(ucp_ep_h ep, MessageId id, const Header& header, AlignedBuffer payload,
            std::function<void(absl::Status)> done = {});

  // The transports UCX selected for `ep` (one line per lane), for the log.
  std::string Describe(ucp_ep_h ep);

 private:
  struct Internals;  // the progress thread's state and UCX's callbacks (.cc)
  UcxWorker(OnMessage on_message, OnEndpointError on_error);
  absl::Status Init(bool loopback_only);
  void Progress();

  const OnMessage on_message_;
  const OnEndpointError on_error_;
  const std::unique_ptr<Internals> internals_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_listener_h listener_ = nullptr;
  int wakeup_fd_ = -1;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::set<ucp_ep_h> endpoints_ ABSL_GUARDED_BY(mu_);  // open ones, closed at the end
};

}  // namespace herald::ucx
