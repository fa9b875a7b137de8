#include "common/process/process_watch.h"

#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

constexpr absl::Duration kPatience = absl::Seconds(20);

// A child process that waits until it is killed (sleep), killed and
// reaped by Kill or the destructor.
class Child {
 public:
  Child() {
    static const std::string dir = testing::MakeTestDir("watched");
    auto started = testing::ChildProcess::Start("/bin/sleep", {"600"}, dir + "/sleep.log");
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) process_ = std::move(*started);
  }
  void Kill() {
    ASSERT_TRUE(process_->Signal(SIGKILL).ok());
    ASSERT_TRUE(process_->WaitForExit(20000).ok());
  }
  // As the child would describe itself.
  ProcessIdentity identity() const {
    ProcessIdentity id = ProcessIdentity::Self();
    id.pid = process_->pid();
    id.start_time = ProcessStartTime(id.pid).value_or(0);
    return id;
  }

 private:
  std::unique_ptr<testing::ChildProcess> process_;
};

TEST(ProcessIdentity, DescribesThisProcessAndRoundTrips) {
  const ProcessIdentity self = ProcessIdentity::Self();
  ASSERT_TRUE(self.valid());
  EXPECT_EQ(self.pid, ::getpid());
  EXPECT_TRUE(self.SameHostAs(self));
  const std::optional<ProcessIdentity> back = ProcessIdentity::Decode(self.Encode());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->Encode(), self.Encode());
  EXPECT_TRUE(back->SameHostAs(self));

  ProcessIdentity other_host = self;
  other_host.boot_id = "another-boot";
  EXPECT_FALSE(self.SameHostAs(other_host));
  ProcessIdentity other_ipc = self;
  other_ipc.ipc_ns += 1;
  EXPECT_FALSE(self.SameHostAs(other_ipc));
  ProcessIdentity other_net = self;  // an emulated host, a container
  other_net.net_ns += 1;
  EXPECT_FALSE(self.SameHostAs(other_net));
  EXPECT_FALSE(self.SameHostAs(ProcessIdentity{}));

  for (const char* bad : {"", "a/1/2/3/4", "a/1/2/3/4/5/6", "/1/2/3/4/5", "a/x/2/3/4/5",
                          "a/1/2/3/0/5", "a/1/2/3/-5/4"}) {
    EXPECT_FALSE(ProcessIdentity::Decode(bad).has_value()) << bad;
  }
}

TEST(ProcessWatch, CallsBackWhenAWatchedProcessIsKilled) {
  Child child;
  ProcessWatch watch;
  absl::Notification exited;
  auto id = watch.Watch(child.identity(), [&] { exited.Notify(); });
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_FALSE(exited.HasBeenNotified());  // alive
  child.Kill();
  EXPECT_TRUE(exited.WaitForNotificationWithTimeout(kPatience));
}

TEST(ProcessWatch, AProcessGoneAlreadyOrAReusedPidCallsBackAtOnce) {
  ProcessWatch watch;
  Child gone;
  const ProcessIdentity gone_id = gone.identity();
  gone.Kill();
  absl::Notification gone_exited;
  ASSERT_TRUE(watch.Watch(gone_id, [&] { gone_exited.Notify(); }).ok());
  EXPECT_TRUE(gone_exited.WaitForNotificationWithTimeout(kPatience));

  // A live pid whose start time is not the watched process's: the pid was
  // reused, the watched process is gone.
  Child live;
  ProcessIdentity earlier = live.identity();
  earlier.start_time -= 1;
  absl::Notification reused_exited;
  ASSERT_TRUE(watch.Watch(earlier, [&] { reused_exited.Notify(); }).ok());
  EXPECT_TRUE(reused_exited.WaitForNotificationWithTimeout(kPatience));
}

TEST(ProcessWatch, AnUnwatchedProcessIsNotReported) {
  Child first, second;
  bool first_reported = false;
  absl::Notification second_exited;
  {
    ProcessWatch watch;
    auto a = watch.Watch(first.identity(), [&] { first_reported = true; });
    auto b = watch.Watch(second.identity(), [&] { second_exited.Notify(); });
    ASSERT_TRUE(a.ok() && b.ok());
    watch.Unwatch(*a);
    // Both dead before the watch looks again: had `first` still been
    // watched, its callback would run in the same pass, before second's.
    first.Kill();
    second.Kill();
    ASSERT_TRUE(second_exited.WaitForNotificationWithTimeout(kPatience));
  }
  EXPECT_FALSE(first_reported);
}

TEST(ProcessWatch, RefusesAProcessOfAnotherHost) {
  ProcessWatch watch;
  ProcessIdentity elsewhere = ProcessIdentity::Self();
  elsewhere.boot_id = "another-boot";
  auto id = watch.Watch(elsewhere, [] {});
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument) << id.status();
}

}  // namespace
}  // namespace herald
