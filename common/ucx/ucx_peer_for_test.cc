// A UCX peer in a process of its own, for ucx_rpc_test's dead-peer tests
// (killed with SIGKILL, as a crashed PS shard or worker would be):
//   ucx_peer_for_test server FILE          serves echo, writes its address to FILE
//   ucx_peer_for_test server-tcp FILE      the same, not offering shared memory
//   ucx_peer_for_test client ADDRESS FILE  makes one call, then writes FILE
// All use the loopback interface (server and client offer shared memory),
// then wait to be killed.

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
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

// `text` into `path` whole (written aside, then renamed), then waits to be
// killed.
int AnnounceAndWait(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp") << text << "\n";
  if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0) return 1;
  for (;;) ::pause();
}

int Serve(const std::string& file, bool shared_memory) {
  RpcServerOptions options;
  options.ucx = SharedMemoryOnLoopback();
  options.ucx.shared_memory = shared_memory;
  auto server = UcxRpcServer::Start(options, [](AlignedBuffer request) {
    return absl::StatusOr<AlignedBuffer>(std::move(request));  // echo
  });
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  return AnnounceAndWait(file, (*server)->address());
}

int CallOnce(const std::string& address, const std::string& file) {
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
  return AnnounceAndWait(file, "called");
}

}  // namespace
}  // namespace herald::ucx

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "server") == 0) return herald::ucx::Serve(argv[2], true);
  if (argc == 3 && std::strcmp(argv[1], "server-tcp") == 0) {
    return herald::ucx::Serve(argv[2], false);
  }
  if (argc == 4 && std::strcmp(argv[1], "client") == 0) {
    return herald::ucx::CallOnce(argv[2], argv[3]);
  }
  std::fprintf(stderr, "usage: %s server FILE | server-tcp FILE | client ADDRESS FILE\n", argv[0]);
  return 2;
}
