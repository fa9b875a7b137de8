#pragma once
// What herald_worker's flags set for every job it runs.

#include <string>

#include "common/rpc/channel.h"
#include "common/tunables.h"
#include "worker/runtime/device_factory.h"

namespace herald::worker {

struct WorkerAgentOptions {
  std::string token;                    // cluster token (empty: none)
  std::string gloo_host = "127.0.0.1";  // interface the Gloo rank listens on
  rpc::ChannelOptions ps_channel;       // TLS settings for the PS shards' channels
  // The embedding data path: "ucx", "grpc" or "auto" (UCX where every shard
  // serves it, TLS is off and it connects; else gRPC).
  std::string transport = "auto";
  // Overlap the PS transfers with each other and with compute, and fetch
  // later steps' early rows during the current one (StepExecutor).
  bool overlap = true;
  // ExecutorOptions::all_reduce_bucket_bytes and ::prefetch_steps.
  uint64_t all_reduce_bucket_bytes = tunables::kAllReduceBucketBytes;
  uint32_t prefetch_steps = tunables::kPrefetchSteps;
  // Threads checking each step's plan (ExecutorOptions::check_threads;
  // 0: DefaultCheckThreads()).
  int check_threads = 0;
  bool ucx_shared_memory = true;  // PsClientOptions::ucx_shared_memory
  std::string device = "cpu";     // "cpu" or "cuda:N": each job's replica runs there
  DeviceOptions device_options;
};

}  // namespace herald::worker
