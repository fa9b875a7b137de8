// Proves each system-library wrapper in //third_party links and works:
// OpenBLAS computes, Gloo all-reduces over TCP on loopback, cpp-httplib serves
// on 127.0.0.1. (libibverbs: ibverbs_test.cc.)

#include <cblas.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gloo/allreduce_ring.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/hash_store.h"
#include "gloo/transport/tcp/device.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace {

TEST(OpenBlas, SgemmAndSdot) {
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c(4, 0);
  EXPECT_FLOAT_EQ(cblas_sdot(4, a.data(), 1, b.data(), 1), 70.0f);
  // C = A·B for row-major 2x2.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2,
              0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{19, 22, 43, 50}));
}

TEST(Gloo, RingAllreduceOverLoopbackTcp) {
  const int size = 2;
  gloo::rendezvous::HashStore store;
  std::vector<std::vector<float>> data = {{1, 2, 3}, {10, 20, 30}};
  // A rank that tears its pairs down while the other still reads from them
  // makes Gloo throw "Connection closed by peer": each keeps its context
  // until both have finished the all-reduce.
  std::mutex mu;
  std::condition_variable all_done;
  int done = 0;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < size; ++rank) {
    ranks.emplace_back([&, rank] {
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
      context->connectFullMesh(store, device);
      std::vector<float*> ptrs = {data[rank].data()};
      gloo::AllreduceRing<float> allreduce(context, ptrs, static_cast<int>(data[rank].size()));
      allreduce.run();
      std::unique_lock<std::mutex> lock(mu);
      ++done;
      all_done.notify_all();
      all_done.wait(lock, [&] { return done == size; });
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(data[0], (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(data[1], (std::vector<float>{11, 22, 33}));
}

TEST(CppHttplib, ServesOnLoopbackPortZero) {
  httplib::Server server;
  server.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("herald_up 1\n", "text/plain");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  // bind_to_any_port already listens: a connection waits in the backlog
  // until the accept loop runs, so no readiness wait is needed.
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/metrics");
  server.stop();
  serving.join();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "herald_up 1\n");
}

}  // namespace
