#include "common/ucx/ucx_worker.h"

#include <poll.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/thread_name.h"

namespace herald::ucx {

// Everything the progress thread owns or drains; the callbacks UCX calls.
struct UcxWorker::Internals {
  // A message queued by Send, sent by the progress thread.
  struct SendOp {
    ucp_ep_h ep;
    MessageId id;
    Header header;  // must live until the send completes (UCX 1.13)
    AlignedBuffer payload;
    std::function<void(absl::Status)> done;
  };
  // A rendezvous message whose data the progress thread receives.
  struct RecvOp {
    UcxWorker* self;
    MessageId id;
    Header header;
    AlignedBuffer payload;
    void* descriptor;
  };

  static void Finish(SendOp* op, absl::Status status) {
    if (op->done) op->done(std::move(status));
    delete op;
  }

  static void SendDone(void* request, ucs_status_t status, void* user_data) {
    Finish(static_cast<SendOp*>(user_data),
           status == UCS_OK
               ? absl::OkStatus()
               : absl::UnavailableError(absl::StrCat("UCX send: ", ucs_status_string(status))));
    ucp_request_free(request);
  }

  static void Deliver(RecvOp* op) {
    op->self->on_message_(op->id, op->header, std::move(op->payload));
    delete op;
  }

  static void RecvDone(void* request, ucs_status_t status, size_t, void* user_data) {
    auto* op = static_cast<RecvOp*>(user_data);
    if (status == UCS_OK) {
      Deliver(op);
    } else {
      HLOG_WARN("UCX: receiving a message: {}", ucs_status_string(status));
      delete op;
    }
    ucp_request_free(request);
  }

  static ucs_status_t OnMessage(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param, MessageId id) {
    auto* self = static_cast<UcxWorker*>(arg);
    Header h;
    if (header_length != sizeof(Header)) {
      HLOG_WARN("UCX: a message with a {}-byte header (expected {}) dropped", header_length,
                sizeof(Header));
      return UCS_OK;
    }
    std::memcpy(&h, header, sizeof(h));
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
      // Received after the callback returns (ProgressPending).
      self->internals_->rendezvous.push_back(new RecvOp{self, id, h, AlignedBuffer(length), data});
      return UCS_INPROGRESS;
    }
    self->on_message_(id, h, AlignedBuffer::CopyOf(data, length));
    return UCS_OK;
  }

  template <MessageId kId>
  static ucs_status_t OnMessageOf(void* arg, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param) {
    return OnMessage(arg, header, header_length, data, length, param, kId);
  }

  static void OnEndpointFailure(void* arg, ucp_ep_h ep, ucs_status_t status) {
    static_cast<UcxWorker*>(arg)->Fail(ep, ucs_status_string(status));
  }

  // Progress-thread state.
  std::vector<RecvOp*> rendezvous;
  std::vector<ucp_ep_h> failed;
  // Filled by Send (any thread, under `mu`), drained by the progress thread.
  absl::Mutex mu;
  std::deque<SendOp*> outbox ABSL_GUARDED_BY(mu);
  // Endpoints whose peer's process exited (ProcessWatch's thread), failed
  // by the progress thread.
  std::vector<std::pair<ucp_ep_h, std::string>> peer_exited ABSL_GUARDED_BY(mu);
};

void UcxWorker::Fail(ucp_ep_h ep, const std::string& why) {
  uint64_t watch = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = endpoints_.find(ep);
    if (it == endpoints_.end()) return;  // closed already
    watch = it->second;
    endpoints_.erase(it);
  }
  if (watch != 0) watch_->Unwatch(watch);
  on_error_(ep, why);
  internals_->failed.push_back(ep);  // closed after progress returns
}

namespace {

void WaitFor(ucp_worker_h worker, ucs_status_ptr_t request) {
  if (request == nullptr || UCS_PTR_IS_ERR(request)) return;
  while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker);
  ucp_request_free(request);
}

void CloseEndpoint(ucp_worker_h worker, ucp_ep_h ep) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_EP_CLOSE_FLAG_FORCE;
  WaitFor(worker, ucp_ep_close_nbx(ep, &p));
}

}  // namespace

absl::StatusOr<std::unique_ptr<UcxWorker>> UcxWorker::Create(OnMessage on_message,
                                                             OnEndpointError on_error,
                                                             const Options& options) {
  std::unique_ptr<UcxWorker> w(new UcxWorker(std::move(on_message), std::move(on_error)));
  if (absl::Status s = w->Init(options); !s.ok()) return s;
  return w;
}

UcxWorker::UcxWorker(OnMessage on_message, OnEndpointError on_error)
    : on_message_(std::move(on_message)),
      on_error_(std::move(on_error)),
      internals_(std::make_unique<Internals>()) {}

absl::Status UcxWorker::Init(const Options& options) {
  ucp_config_t* config = nullptr;
  if (ucs_status_t s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK) {
    return absl::UnavailableError(absl::StrCat("UCX configuration: ", ucs_status_string(s)));
  }
  if (options.loopback_only && std::getenv("UCX_NET_DEVICES") == nullptr) {
    ucp_config_modify(config, "NET_DEVICES", "lo");
  }
  if (options.shared_memory) watch_ = std::make_unique<ProcessWatch>();
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  const ucs_status_t init = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (init != UCS_OK) {
    context_ = nullptr;
    return absl::UnavailableError(absl::StrCat("UCX init: ", ucs_status_string(init)));
  }
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  if (ucs_status_t s = ucp_worker_create(context_, &wp, &worker_); s != UCS_OK) {
    worker_ = nullptr;
    return absl::UnavailableError(absl::StrCat("UCX worker: ", ucs_status_string(s)));
  }
  if (ucs_status_t s = ucp_worker_get_efd(worker_, &wakeup_fd_); s != UCS_OK) {
    return absl::UnavailableError(absl::StrCat("UCX wakeup fd: ", ucs_status_string(s)));
  }
  const std::pair<MessageId, ucp_am_recv_callback_t> handlers[] = {
      {kHello, &Internals::OnMessageOf<kHello>},
      {kHelloReply, &Internals::OnMessageOf<kHelloReply>},
      {kRequest, &Internals::OnMessageOf<kRequest>},
      {kReply, &Internals::OnMessageOf<kReply>}};
  for (const auto& [id, cb] : handlers) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = id;
    hp.cb = cb;
    hp.arg = this;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    if (ucs_status_t s = ucp_worker_set_am_recv_handler(worker_, &hp); s != UCS_OK) {
      return absl::UnavailableError(absl::StrCat("UCX handler: ", ucs_status_string(s)));
    }
  }
  thread_ = std::thread([this] {
    NameThisThread("ucx-progress");
    Progress();
  });
  return absl::OkStatus();
}

UcxWorker::~UcxWorker() {
  // The progress thread first: failing an endpoint whose peer exited
  // unwatches it (Fail), so the watch must outlive the thread. A watch
  // callback meanwhile only queues the endpoint and signals the worker,
  // which both still exist until the watch is gone.
  if (thread_.joinable()) {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    ucp_worker_signal(worker_);
    thread_.join();
  }
  watch_.reset();
  if (worker_ != nullptr) {
    std::map<ucp_ep_h, uint64_t> open;
    {
      absl::MutexLock lock(&mu_);
      open.swap(endpoints_);
    }
    for (const auto& [ep, watch] : open) CloseEndpoint(worker_, ep);
    {
      absl::MutexLock lock(&internals_->mu);
      for (Internals::SendOp* op : internals_->outbox) {
        Internals::Finish(op, absl::CancelledError("the UCX worker is shutting down"));
      }
      internals_->outbox.clear();
    }
    for (Internals::RecvOp* op : internals_->rendezvous) {
      ucp_am_data_release(worker_, op->descriptor);
      delete op;
    }
    ucp_worker_destroy(worker_);
  }
  if (context_ != nullptr) ucp_cleanup(context_);
}

void UcxWorker::Progress() {
  for (;;) {
    // Sends queued by other threads.
    std::deque<Internals::SendOp*> outbox;
    {
      absl::MutexLock lock(&internals_->mu);
      outbox.swap(internals_->outbox);
    }
    for (Internals::SendOp* op : outbox) {
      bool open;
      {
        absl::MutexLock lock(&mu_);
        open = endpoints_.count(op->ep) > 0;
      }
      if (!open) {
        Internals::Finish(op, absl::UnavailableError("the UCX endpoint is closed"));
        continue;
      }
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      p.cb.send = &Internals::SendDone;
      p.user_data = op;
      ucs_status_ptr_t r = ucp_am_send_nbx(op->ep, op->id, &op->header, sizeof(Header),
                                           op->payload.data(), op->payload.size(), &p);
      if (r == nullptr) {
        Internals::Finish(op, absl::OkStatus());
      } else if (UCS_PTR_IS_ERR(r)) {
        Internals::Finish(op, absl::UnavailableError(absl::StrCat(
                                  "UCX send: ", ucs_status_string(UCS_PTR_STATUS(r)))));
      }
    }
    while (ucp_worker_progress(worker_) != 0) {
    }
    // Rendezvous data announced during progress: receive it now.
    std::vector<Internals::RecvOp*> rendezvous;
    rendezvous.swap(internals_->rendezvous);
    for (Internals::RecvOp* op : rendezvous) {
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      p.cb.recv_am = &Internals::RecvDone;
      p.user_data = op;
      ucs_status_ptr_t r =
          ucp_am_recv_data_nbx(worker_, op->descriptor, op->payload.data(), op->payload.size(), &p);
      if (r == nullptr) {
        Internals::Deliver(op);
      } else if (UCS_PTR_IS_ERR(r)) {
        HLOG_WARN("UCX: receiving a message: {}", ucs_status_string(UCS_PTR_STATUS(r)));
        delete op;
      }
    }
    std::vector<std::pair<ucp_ep_h, std::string>> peer_exited;
    {
      absl::MutexLock lock(&internals_->mu);
      peer_exited.swap(internals_->peer_exited);
    }
    for (const auto& [ep, why] : peer_exited) Fail(ep, why);
    std::vector<ucp_ep_h> failed;
    failed.swap(internals_->failed);
    for (ucp_ep_h ep : failed) CloseEndpoint(worker_, ep);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (!rendezvous.empty() || !outbox.empty()) continue;
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;
    {
      absl::MutexLock lock(&internals_->mu);
      if (!internals_->outbox.empty()) continue;
    }
    pollfd fd{wakeup_fd_, POLLIN, 0};
    ::poll(&fd, 1, 100);  // woken by traffic or ucp_worker_signal
  }
}

absl::StatusOr<std::string> UcxWorker::Address() {
  ucp_address_t* address = nullptr;
  size_t length = 0;
  if (ucs_status_t s = ucp_worker_get_address(worker_, &address, &length); s != UCS_OK) {
    return absl::UnavailableError(absl::StrCat("UCX worker address: ", ucs_status_string(s)));
  }
  std::string bytes(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker_, address);
  return bytes;
}

absl::StatusOr<ucp_ep_h> UcxWorker::Connect(const std::string& address,
                                            const ProcessIdentity* peer) {
  // The endpoint exists only once ucp_ep_create returns, and the peer may
  // be dead already: the watch reports through `pending`, which the watch's
  // callback fills until the endpoint is known.
  struct Pending {
    absl::Mutex mu;
    ucp_ep_h ep ABSL_GUARDED_BY(mu) = nullptr;
    bool exited ABSL_GUARDED_BY(mu) = false;
  };
  auto pending = std::make_shared<Pending>();
  uint64_t watch = 0;
  const std::string why =
      peer == nullptr ? "" : absl::StrCat("process ", peer->pid, " (a peer on this host) exited");
  if (watch_ != nullptr && peer != nullptr) {
    absl::StatusOr<uint64_t> id = watch_->Watch(*peer, [this, pending, why] {
      absl::MutexLock lock(&pending->mu);
      pending->exited = true;
      if (pending->ep == nullptr) return;
      {
        absl::MutexLock outbox(&internals_->mu);
        internals_->peer_exited.emplace_back(pending->ep, why);
      }
      ucp_worker_signal(worker_);
    });
    if (id.ok()) watch = *id;
  }
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p.address = reinterpret_cast<const ucp_address_t*>(address.data());
  // Asking UCX to report a dead peer rules out its shared-memory
  // transports; a watched peer's death is reported by the watch.
  p.err_mode = watch != 0 ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = &Internals::OnEndpointFailure;
  p.err_handler.arg = this;
  ucp_ep_h ep = nullptr;
  if (ucs_status_t s = ucp_ep_create(worker_, &p, &ep); s != UCS_OK) {
    if (watch != 0) watch_->Unwatch(watch);
    return absl::UnavailableError(absl::StrCat("UCX: cannot connect: ", ucs_status_string(s)));
  }
  {
    absl::MutexLock lock(&mu_);
    endpoints_.emplace(ep, watch);
  }
  {
    absl::MutexLock lock(&pending->mu);
    pending->ep = ep;
    if (pending->exited) {
      absl::MutexLock outbox(&internals_->mu);
      internals_->peer_exited.emplace_back(ep, why);
    }
  }
  ucp_worker_signal(worker_);
  return ep;
}

bool UcxWorker::SharedMemory(ucp_ep_h ep) {
  absl::MutexLock lock(&mu_);
  auto it = endpoints_.find(ep);
  return it != endpoints_.end() && it->second != 0;
}

void UcxWorker::Send(ucp_ep_h ep, MessageId id, const Header& header, AlignedBuffer payload,
                     std::function<void(absl::Status)> done) {
  {
    absl::MutexLock lock(&internals_->mu);
    internals_->outbox.push_back(
        new Internals::SendOp{ep, id, header, std::move(payload), std::move(done)});
  }
  ucp_worker_signal(worker_);
}

std::string UcxWorker::Describe(ucp_ep_h ep) {
  char* text = nullptr;
  size_t size = 0;
  FILE* stream = ::open_memstream(&text, &size);
  if (stream == nullptr) return "";
  ucp_ep_print_info(ep, stream);
  std::fclose(stream);
  std::string out(text, size);
  std::free(text);
  return out;
}

}  // namespace herald::ucx
