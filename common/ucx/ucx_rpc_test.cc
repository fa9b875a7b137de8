// UCX request/reply between two workers of this process (UCX picks shared
// memory here): small and rendezvous-sized payloads arrive intact and aligned,
// concurrent calls get their own replies, a handler's error comes back as
// the call's, a connection without the token is refused, a call to a
// server that takes too long fails with DEADLINE_EXCEEDED and one to a
// server that died (over TCP) with UNAVAILABLE, both naming the server.
// Over shared memory, a peer process killed with SIGKILL fails its
// connection at once too, on both sides (its process is watched). Where
// only one side offers shared memory, the two talk over TCP, and a killed
// peer is still noticed.

#include "common/ucx/ucx_rpc.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/harness/process.h"

namespace herald::ucx {
namespace {

// Answers a request of n uint64 values with their sum, then the values + 1.
absl::StatusOr<AlignedBuffer> SumAndIncrement(AlignedBuffer request) {
  if (reinterpret_cast<uintptr_t>(request.data()) % 8 != 0) {
    return absl::InternalError("request not 8-byte aligned");
  }
  if (request.size() % 8 != 0) return absl::InvalidArgumentError("not whole uint64 values");
  const size_t n = request.size() / 8;
  const auto* in = reinterpret_cast<const uint64_t*>(request.data());
  AlignedBuffer reply((n + 1) * 8);
  auto* out = reinterpret_cast<uint64_t*>(reply.data());
  out[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    out[0] += in[i];
    out[i + 1] = in[i] + 1;
  }
  return reply;
}

AlignedBuffer Values(size_t n, uint64_t first) {
  AlignedBuffer b(n * 8);
  auto* v = reinterpret_cast<uint64_t*>(b.data());
  for (size_t i = 0; i < n; ++i) v[i] = first + i;
  return b;
}

RpcServerOptions Loopback(std::string token = "") {
  RpcServerOptions o;
  o.token = std::move(token);
  o.ucx.loopback_only = true;
  o.ucx.shared_memory = true;
  return o;
}

absl::StatusOr<std::unique_ptr<UcxRpcClient>> ConnectTo(const UcxRpcServer& server,
                                                        const std::string& token) {
  return UcxRpcClient::Connect({server.address()}, {"the test server"}, token, absl::Seconds(10),
                               UcxWorker::Options{true, true});
}

TEST(UcxRpc, SmallAndLargePayloadsConcurrentCallsAndErrors) {
  auto server = UcxRpcServer::Start(Loopback(), [](AlignedBuffer request) {
    if (request.size() == 3)
      return absl::StatusOr<AlignedBuffer>(
          absl::FailedPreconditionError("three bytes are not allowed"));
    return SumAndIncrement(std::move(request));
  });
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = ConnectTo(**server, "");
  ASSERT_TRUE(client.ok()) << client.status();
  std::printf("UCX lanes to the server:\n%s\n", (*client)->Describe(0).c_str());

  // 1 value (eager) to 4M values (32 MiB: rendezvous), from 4 threads at once.
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t n : {size_t{1}, size_t{1000}, size_t{100000}, size_t{1} << 22}) {
        const uint64_t first = 1000 * t;
        absl::StatusOr<AlignedBuffer> reply =
            (*client)->Call(0, Values(n, first), absl::Seconds(30));
        if (!reply.ok()) {
          failures[t] = reply.status().ToString();
          return;
        }
        const auto* v = reinterpret_cast<const uint64_t*>(reply->data());
        const uint64_t sum = n * first + n * (n - 1) / 2;
        if (reply->size() != (n + 1) * 8 || v[0] != sum || v[1] != first + 1 || v[n] != first + n) {
          failures[t] = absl::StrCat("wrong reply for ", n, " values");
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");

  absl::StatusOr<AlignedBuffer> refused = (*client)->Call(0, AlignedBuffer(3), absl::Seconds(10));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(), "three bytes are not allowed");
  EXPECT_EQ((*client)->Call(5, AlignedBuffer(8), absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Calls started from one thread are all in flight at once and each Wait
// gets its own reply, in any order; a forgotten call leaves nothing behind
// and a call is waited for once.
TEST(UcxRpc, StartedCallsAreWaitedForInAnyOrder) {
  auto server = UcxRpcServer::Start(Loopback(), SumAndIncrement);
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = ConnectTo(**server, "");
  ASSERT_TRUE(client.ok()) << client.status();
  std::vector<uint64_t> ids;
  for (uint64_t first : {10, 20, 30}) {
    auto id = (*client)->Start(0, Values(100000, first));
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  auto forgotten = (*client)->Start(0, Values(5, 1));
  ASSERT_TRUE(forgotten.ok());
  (*client)->Forget(*forgotten);
  for (int k = 2; k >= 0; --k) {
    absl::StatusOr<AlignedBuffer> reply = (*client)->Wait(ids[k], absl::Seconds(30));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reinterpret_cast<const uint64_t*>(reply->data())[1], 10u * (k + 1) + 1);
  }
  EXPECT_EQ((*client)->Wait(ids[0], absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*client)->Wait(*forgotten, absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*client)->Call(0, Values(2, 1), absl::Seconds(10)).ok());
}

TEST(UcxRpc, AConnectionWithoutTheTokenIsRefused) {
  auto server = UcxRpcServer::Start(Loopback("s3cret"), SumAndIncrement);
  ASSERT_TRUE(server.ok()) << server.status();
  auto wrong = ConnectTo(**server, "guess");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kUnauthenticated) << wrong.status();
  EXPECT_NE(wrong.status().message().find("the test server"), std::string::npos);
  EXPECT_GE((*server)->refused(), 1u);
  auto right = ConnectTo(**server, "s3cret");
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_TRUE((*right)->Call(0, Values(4, 1), absl::Seconds(10)).ok());
}

TEST(UcxRpc, AnAddressThatIsNotOneIsRefused) {
  for (const char* bad : {"127.0.0.1:5", "ucx:", "ucx:abc", "ucx:zz", "ucx:ab@", "ucx:ab@1/2/3",
                          "ucx:@b/1/2/3/4/5"}) {
    auto client = UcxRpcClient::Connect({bad}, {"shard 3"}, "", absl::Seconds(1), {});
    ASSERT_FALSE(client.ok()) << bad;
    EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument) << client.status();
    EXPECT_NE(client.status().message().find("shard 3"), std::string::npos) << client.status();
  }
}

TEST(UcxRpc, ASlowServerIsADeadlineNamingIt) {
  absl::Notification release;
  auto server = UcxRpcServer::Start(Loopback(), [&](AlignedBuffer request) {
    if (request.size() == 8) release.WaitForNotification();  // one slow call
    return SumAndIncrement(std::move(request));
  });
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = ConnectTo(**server, "");
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Status slow = (*client)->Call(0, Values(1, 1), absl::Milliseconds(200)).status();
  EXPECT_EQ(slow.code(), absl::StatusCode::kDeadlineExceeded) << slow;
  EXPECT_NE(slow.message().find("the test server"), std::string::npos) << slow;
  release.Notify();
  EXPECT_TRUE((*client)->Call(0, Values(2, 1), absl::Seconds(10)).ok());  // still serving
}

// Over TCP (what peers on other hosts use; here on the loopback interface)
// UCX reports a dead peer: the call fails with UNAVAILABLE, not at its
// deadline.
TEST(UcxRpc, ADeadServerOverTcpIsUnavailableNamingIt) {
  setenv("UCX_NET_DEVICES", "lo", 1);
  RpcServerOptions options;  // no shared memory: TCP, with peer failure detection
  auto server = UcxRpcServer::Start(options, SumAndIncrement);
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = UcxRpcClient::Connect({(*server)->address()}, {"shard 0"}, "", absl::Seconds(10),
                                      UcxWorker::Options{});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_NE((*client)->Describe(0).find("tcp/lo"), std::string::npos) << (*client)->Describe(0);
  EXPECT_TRUE((*client)->Call(0, Values(2, 1), absl::Seconds(10)).ok());
  server->reset();  // the server goes away
  const absl::Status dead = (*client)->Call(0, Values(2, 1), absl::Seconds(60)).status();
  EXPECT_EQ(dead.code(), absl::StatusCode::kUnavailable) << dead;
  EXPECT_NE(dead.message().find("shard 0"), std::string::npos) << dead;
  unsetenv("UCX_NET_DEVICES");
}

TEST(UcxRpc, AnAddressNamesTheServersProcessWhereItOffersSharedMemory) {
  auto shared = UcxRpcServer::Start(Loopback(), SumAndIncrement);
  ASSERT_TRUE(shared.ok()) << shared.status();
  auto address = DecodeAddress((*shared)->address());
  ASSERT_TRUE(address.ok()) << address.status();
  ASSERT_TRUE(address->process.has_value()) << (*shared)->address();
  EXPECT_EQ(address->process->Encode(), ProcessIdentity::Self().Encode());
  RpcServerOptions tcp_only;
  tcp_only.ucx.loopback_only = true;
  auto tcp = UcxRpcServer::Start(tcp_only, SumAndIncrement);
  ASSERT_TRUE(tcp.ok()) << tcp.status();
  auto plain = DecodeAddress((*tcp)->address());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->process.has_value());
  EXPECT_EQ(EncodeAddress(plain->worker), (*tcp)->address());
}

// ucx_peer_for_test in a process of its own (killed by the test or at the
// end), and what it wrote to its file once ready; "" if it exited first.
struct Peer {
  std::unique_ptr<testing::ChildProcess> process;
  std::string announced;
};
Peer StartPeer(const std::string& name, std::vector<std::string> args) {
  static const std::string dir = testing::MakeTestDir("ucx_peers");
  const std::string file = dir + "/" + name;
  args.push_back(file);
  auto process = testing::ChildProcess::Start(testing::RunfilePath("common/ucx/ucx_peer_for_test"),
                                              args, dir + "/" + name + ".log");
  EXPECT_TRUE(process.ok()) << process.status();
  if (!process.ok()) return {};
  Peer peer{std::move(*process), ""};
  if (absl::Status s = peer.process->WaitForFile(file, 20000); !s.ok()) {
    ADD_FAILURE() << s;
    return peer;
  }
  std::ifstream(file) >> peer.announced;
  return peer;
}

void Kill(testing::ChildProcess& process) {
  ASSERT_TRUE(process.Signal(SIGKILL).ok());
  ASSERT_TRUE(process.WaitForExit(20000).ok());
}

// Shared memory cannot report a dead peer; the watched process can: a call
// in flight to a server killed with SIGKILL fails with UNAVAILABLE naming
// the server at once, not at its 60 s deadline.
TEST(UcxRpc, AServerKilledOverSharedMemoryIsUnavailableAtOnce) {
  Peer server = StartPeer("server", {"server"});
  ASSERT_FALSE(server.announced.empty()) << "the server process did not start";
  auto client = UcxRpcClient::Connect({server.announced}, {"shard 1"}, "", absl::Seconds(10),
                                      UcxWorker::Options{true, true});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Call(0, Values(2, 1), absl::Seconds(10)).ok());
  EXPECT_TRUE((*client)->SharedMemory(0));
  const std::string lanes = (*client)->Describe(0);
  std::printf("UCX lanes to the server process:\n%s\n", lanes.c_str());
  EXPECT_TRUE(lanes.find("posix") != std::string::npos || lanes.find("sysv") != std::string::npos ||
              lanes.find("cma") != std::string::npos)
      << lanes;
  // A call in flight when the server dies.
  auto started = (*client)->Start(0, Values(3, 1));
  Kill(*server.process);
  const absl::Time before = absl::Now();
  absl::Status dead =
      started.ok() ? (*client)->Wait(*started, absl::Seconds(60)).status() : started.status();
  // The in-flight call may have been answered before the kill.
  if (dead.ok()) dead = (*client)->Call(0, Values(2, 1), absl::Seconds(60)).status();
  EXPECT_EQ(dead.code(), absl::StatusCode::kUnavailable) << dead;
  EXPECT_NE(dead.message().find("shard 1"), std::string::npos) << dead;
  EXPECT_NE(dead.message().find("exited"), std::string::npos) << dead;
  EXPECT_LT(absl::Now() - before, absl::Seconds(20)) << "noticed only at the deadline";
  std::string why;
  EXPECT_TRUE((*client)->Failed(0, &why));
}

// The other way round: a client process killed over shared memory is
// dropped by the server at once.
TEST(UcxRpc, AClientKilledOverSharedMemoryIsDropped) {
  auto server = UcxRpcServer::Start(Loopback(), SumAndIncrement);
  ASSERT_TRUE(server.ok()) << server.status();
  Peer client = StartPeer("client", {"client", (*server)->address()});
  ASSERT_EQ(client.announced, "called");
  ASSERT_TRUE((*server)->WaitForConnections(1, absl::Seconds(10)));
  EXPECT_TRUE((*server)->SharedMemory(1));  // the first connection's id
  Kill(*client.process);
  EXPECT_TRUE((*server)->WaitForConnections(0, absl::Seconds(20)))
      << "the dead client's connection is still open";
}

// A client that offers shared memory, a server process that does not
// (--ucx_shared_memory=false on one side only): TCP, with UCX's own
// detection of a dead peer, which a killed server's closed socket trips.
TEST(UcxRpc, OnlyTheClientOfferingSharedMemoryMeansTcpAndADeadServerIsNoticed) {
  Peer server = StartPeer("tcp-server", {"server-tcp"});
  ASSERT_FALSE(server.announced.empty()) << "the server process did not start";
  auto client = UcxRpcClient::Connect({server.announced}, {"shard 2"}, "", absl::Seconds(10),
                                      UcxWorker::Options{true, true});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Call(0, Values(2, 1), absl::Seconds(10)).ok());
  EXPECT_FALSE((*client)->SharedMemory(0));
  EXPECT_NE((*client)->Describe(0).find("tcp/lo"), std::string::npos) << (*client)->Describe(0);
  Kill(*server.process);
  const absl::Status dead = (*client)->Call(0, Values(2, 1), absl::Seconds(60)).status();
  EXPECT_EQ(dead.code(), absl::StatusCode::kUnavailable) << dead;
  EXPECT_NE(dead.message().find("shard 2"), std::string::npos) << dead;
}

// The other way round: a server offering shared memory, a client that
// does not. Calls work; the server's side of the connection is not shared
// memory either.
TEST(UcxRpc, OnlyTheServerOfferingSharedMemoryMeansTcp) {
  auto server = UcxRpcServer::Start(Loopback(), SumAndIncrement);
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = UcxRpcClient::Connect({(*server)->address()}, {"shard 3"}, "", absl::Seconds(10),
                                      UcxWorker::Options{true, false});
  ASSERT_TRUE(client.ok()) << client.status();
  auto reply = (*client)->Call(0, Values(3, 5), absl::Seconds(10));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reinterpret_cast<const uint64_t*>(reply->data())[0], 5u + 6u + 7u);
  EXPECT_FALSE((*client)->SharedMemory(0));
  ASSERT_TRUE((*server)->WaitForConnections(1, absl::Seconds(10)));
  EXPECT_FALSE((*server)->SharedMemory(1));  // the first connection's id
}

}  // namespace
}  // namespace herald::ucx
