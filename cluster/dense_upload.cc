#include "cluster/dense_upload.h"

#include <algorithm>

#include "common/crc32.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/tunables.h"

namespace herald::cluster {
namespace {

// Streams `values` with every chunk a copy of `header` plus its slice.
absl::Status Upload(proto::WorkerService::Stub* stub, const std::string& token,
                    proto::DenseChunk header, const std::vector<float>& values,
                    size_t chunk_floats) {
  grpc::ClientContext context;
  rpc::SetDeadline(&context, tunables::kDenseUploadDeadlineMs);
  rpc::AttachToken(&context, token);
  proto::UploadDenseResponse response;
  std::unique_ptr<grpc::ClientWriter<proto::DenseChunk>> writer =
      stub->UploadDense(&context, &response);
  size_t offset = 0;
  do {
    const size_t n = std::min(chunk_floats, values.size() - offset);
    proto::DenseChunk chunk = header;
    chunk.set_total_floats(values.size());
    chunk.set_offset(offset);
    chunk.set_values(values.data() + offset, n * sizeof(float));
    if (!writer->Write(chunk)) break;  // Finish() gives the reason
    offset += n;
  } while (offset < values.size());
  writer->WritesDone();
  return rpc::FromGrpcStatus(writer->Finish());
}

}  // namespace

uint32_t DenseCrc32(const std::vector<float>& values) {
  return Crc32(values.data(), values.size() * sizeof(float));
}

absl::Status UploadDense(proto::WorkerService::Stub* stub, const std::string& token,
                         const std::string& node_id, const std::string& job_id, uint64_t run_id,
                         const std::vector<float>& values, size_t chunk_floats) {
  proto::DenseChunk header;
  header.set_node_id(node_id);
  header.set_job_id(job_id);
  header.set_run_id(run_id);
  return Upload(stub, token, header, values, chunk_floats);
}

absl::Status UploadCheckpointDense(proto::WorkerService::Stub* stub, const std::string& token,
                                   const std::string& node_id, const std::string& job_id,
                                   uint64_t run_id, uint64_t iteration,
                                   const std::vector<float>& values,
                                   const std::vector<float>& state, size_t chunk_floats) {
  proto::DenseChunk header;
  header.set_node_id(node_id);
  header.set_job_id(job_id);
  header.set_run_id(run_id);
  header.set_checkpoint(true);
  header.set_iteration(iteration);
  header.set_state_floats(state.size());
  std::vector<float> both = values;
  both.insert(both.end(), state.begin(), state.end());
  return Upload(stub, token, header, both, chunk_floats);
}

}  // namespace herald::cluster
