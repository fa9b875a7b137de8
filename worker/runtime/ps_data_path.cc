#include "worker/runtime/ps_data_path.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status.h"
#include "ps_server/client/sharded_ps_client.h"

namespace herald::worker {

absl::StatusOr<JobPsClient> ConnectJobPs(const proto::JoinJobResponse& join,
                                         const WorkerAgentOptions& options) {
  const std::vector<std::string> ps_addresses(join.ps_addresses().begin(),
                                              join.ps_addresses().end());
  JobPsClient result;
  ps::PsClientOptions grpc_only;
  grpc_only.channel = options.ps_channel;
  grpc_only.run_id = join.run_id();
  const bool tls = !options.ps_channel.tls_root_cert_path.empty();
  const bool offered = join.ps_ucx_addresses_size() == static_cast<int>(ps_addresses.size());
  // The job's data_path overrides this worker's --transport.
  std::string transport = options.transport;
  std::string chosen_by = "--transport=" + transport;
  if (join.spec().data_path() == proto::DATA_PATH_GRPC) {
    transport = "grpc";
    chosen_by = "the job's data_path";
  } else if (join.spec().data_path() == proto::DATA_PATH_UCX) {
    transport = "ucx";
    chosen_by = "the job's data_path";
    if (tls) {
      return absl::FailedPreconditionError(
          "the job's data_path is DATA_PATH_UCX, but this worker reaches the PS over TLS and UCX "
          "is not encrypted (use DATA_PATH_GRPC or DATA_PATH_DEFAULT)");
    }
  }
  if (transport == "grpc" || (transport == "auto" && (tls || !offered))) {
    HLOG_INFO("job {}: data path gRPC ({})", join.job_id(),
              transport == "grpc" ? chosen_by
              : tls               ? "TLS is configured"
                                  : "not every shard serves UCX");
    HERALD_ASSIGN_OR_RETURN(result.client, ps::MakeGrpcPsClient(ps_addresses, grpc_only));
    return result;
  }
  if (!offered) {
    return absl::FailedPreconditionError(
        absl::StrCat(chosen_by,
                     " asks for UCX, but not every PS shard serves it (start them with "
                     "--transport=ucx or auto)"));
  }
  ps::PsClientOptions with_ucx = grpc_only;
  with_ucx.ucx_addresses.assign(join.ps_ucx_addresses().begin(), join.ps_ucx_addresses().end());
  with_ucx.token = options.token;
  with_ucx.ucx_shared_memory = options.ucx_shared_memory;
  absl::StatusOr<std::unique_ptr<ps::PsClient>> client =
      ps::MakeGrpcPsClient(ps_addresses, with_ucx);
  if (client.ok()) {
    HLOG_INFO("job {}: data path UCX to {} shard(s)", join.job_id(), ps_addresses.size());
    result.client = *std::move(client);
    result.over_ucx = true;
    return result;
  }
  if (transport == "ucx") return client.status();
  HLOG_WARN("job {}: data path gRPC (UCX did not connect: {})", join.job_id(),
            std::string(client.status().message()));
  HERALD_ASSIGN_OR_RETURN(result.client, ps::MakeGrpcPsClient(ps_addresses, grpc_only));
  return result;
}

}  // namespace herald::worker
