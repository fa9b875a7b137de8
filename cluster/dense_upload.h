#pragma once
// The end of a job on a worker: every replica reports the CRC-32 of its dense
// parameter bytes with the last iteration (the scheduler checks that the
// replicas agree), and rank 0 uploads the parameters themselves so that the
// scheduler can export the model.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/scheduler.grpc.pb.h"

namespace herald::cluster {

// CRC-32 of the float32 bytes of `values`.
uint32_t DenseCrc32(const std::vector<float>& values);

// Streams `values` to WorkerService.UploadDense in chunks of at most
// `chunk_floats`, for run `run_id` of the job (JoinJobResponse.run_id).
// Errors: the RPC's status.
absl::Status UploadDense(proto::WorkerService::Stub* stub, const std::string& token,
                         const std::string& node_id, const std::string& job_id, uint64_t run_id,
                         const std::vector<float>& values, size_t chunk_floats = 1 << 18);

// The same for a checkpoint after `iteration` (WorkerStep.checkpoint): the
// parameters, then the dense optimizer's `state`.
absl::Status UploadCheckpointDense(proto::WorkerService::Stub* stub, const std::string& token,
                                   const std::string& node_id, const std::string& job_id,
                                   uint64_t run_id, uint64_t iteration,
                                   const std::vector<float>& values,
                                   const std::vector<float>& state, size_t chunk_floats = 1 << 18);

}  // namespace herald::cluster
