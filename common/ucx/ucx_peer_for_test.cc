// A UCX peer in a process of its own, for ucx_rpc_test's dead-peer tests
// (killed with SIGKILL, as a crashed PS shard or worker would be):
//   ucx_peer_for_test server          prints its address and echoes every request
//   ucx_peer_for_test client ADDRESS  connects, makes one call, prints "called"
// Both offer shared memory on the loopback interface, then wait for their
// stdin to close.

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "common/ucx/ucx_rpc.h"

namespace herald::ucx {
namespace {

UcxWorker::Options SharedMemoryOnLoopback() {
  UcxWorker::Options o;
  o.loopback_only = true;
  o.shared_memory = true;
  return o;
}

void WaitForStdinToClose() {
  std::string line;
  while (std::getline(std::cin, line)) {
  }
}

int Serve() {
  RpcServerOptions options;
  options.ucx = SharedMemoryOnLoopback();
  auto server = UcxRpcServer::Start(options, [](AlignedBuffer request) {
    return absl::StatusOr<AlignedBuffer>(std::move(request));  // echo
  });
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", (*server)->address().c_str());
  std::fflush(stdout);
  WaitForStdinToClose();
  return 0;
}

int CallOnce(const std::string& address) {
  auto client = UcxRpcClient::Connect({address}, {"the test's server"}, "", absl::Seconds(10),
                                      SharedMemoryOnLoopback());
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  auto reply = (*client)->Call(0, AlignedBuffer::CopyOf("8 bytes!", 8), absl::Seconds(10));
  if (!reply.ok()) {
    std::fprintf(stderr, "%s\n", reply.status().ToString().c_str());
    return 1;
  }
  std::printf("called\n");
  std::fflush(stdout);
  WaitForStdinToClose();
  return 0;
}

}  // namespace
}  // namespace herald::ucx

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "server") == 0) return herald::ucx::Serve();
  if (argc == 3 && std::strcmp(argv[1], "client") == 0) return herald::ucx::CallOnce(argv[2]);
  std::fprintf(stderr, "usage: %s server | client ADDRESS\n", argv[0]);
  return 2;
}
