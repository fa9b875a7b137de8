#pragma once
// A call started and not yet waited for (PsClient::StartFetch, the shard
// stubs' Start* calls, RowExchanger::Start): Wait() blocks until its outcome, or the deadline
// the call was started with, and returns it; once. Destroying one without
// waiting gives the call up (its answer, if one comes, is dropped).

#include <functional>
#include <future>
#include <memory>
#include <utility>

namespace herald {

template <typename T>
class PendingCall {
 public:
  PendingCall() = default;
  explicit PendingCall(std::function<T()> wait) : wait_(std::move(wait)) {}
  // A call whose outcome is known already.
  static PendingCall Done(T outcome) {
    return PendingCall([outcome = std::move(outcome)]() mutable { return std::move(outcome); });
  }

  bool valid() const { return static_cast<bool>(wait_); }
  // REQUIRES: valid(); afterwards it is not.
  T Wait() {
    std::function<T()> wait = std::move(wait_);
    wait_ = nullptr;
    return wait();
  }

 private:
  std::function<T()> wait_;
};

// `call` run on a thread of its own, as a PendingCall (destroying it
// unwaited waits for the thread, as std::async's future does).
template <typename T>
PendingCall<T> StartOnThread(std::function<T()> call) {
  auto running = std::make_shared<std::future<T>>(std::async(std::launch::async, std::move(call)));
  return PendingCall<T>([running] { return running->get(); });
}

}  // namespace herald
