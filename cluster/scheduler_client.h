#pragma once
// A worker's side of the scheduler's WorkerService: join a job, read its
// step stream, report steps and evaluations, upload dense parameters. An
// interface, as the PS has PsClient: MakeGrpcSchedulerClient talks to a real
// herald_scheduler (every call with the cluster token and a deadline from
// the tunables), FakeSchedulerClient (testing/) scripts one for unit tests.
// Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/scheduler.pb.h"

namespace herald::cluster {

// One job's step stream.
class StepReader {
 public:
  virtual ~StepReader() = default;
  // The next step, waiting for it; false once the stream ended (then
  // Finish gives its status). Called from one thread.
  virtual bool Read(proto::WorkerStep* step) = 0;
  // The stream's final status: OK when the scheduler ended it after the
  // run succeeded, else why it ended. REQUIRES: Read returned false; once.
  virtual absl::Status Finish() = 0;
  // Ends the stream from this side: a Read waiting returns false. Any
  // thread, any time.
  virtual void Cancel() = 0;
};

class SchedulerClient {
 public:
  virtual ~SchedulerClient() = default;
  // Errors: NotFound when no job includes the worker yet (the scheduler
  // held the call up to kJoinWaitMs), the RPC's.
  virtual absl::StatusOr<proto::JoinJobResponse> JoinJob(const proto::JoinJobRequest& request) = 0;
  virtual std::unique_ptr<StepReader> OpenSteps(const proto::WorkerStepsRequest& request) = 0;
  // A step's report, or (report.error set) the failure that stopped it.
  virtual absl::Status ReportStep(const proto::StepReport& report) = 0;
  virtual absl::Status ReportEval(const proto::EvalReport& report) = 0;
  // The final dense parameters of run `run_id` (rank 0, before its last
  // report), or those of the checkpoint after `iteration` with the dense
  // optimizer's `state`.
  virtual absl::Status UploadDense(const std::string& node_id, const std::string& job_id,
                                   uint64_t run_id, const std::vector<float>& values) = 0;
  virtual absl::Status UploadCheckpointDense(const std::string& node_id, const std::string& job_id,
                                             uint64_t run_id, uint64_t iteration,
                                             const std::vector<float>& values,
                                             const std::vector<float>& state) = 0;
};

// A client of the herald_scheduler behind `channel`; every call carries
// `token` (empty: none).
std::unique_ptr<SchedulerClient> MakeGrpcSchedulerClient(std::shared_ptr<grpc::Channel> channel,
                                                         std::string token);

}  // namespace herald::cluster
