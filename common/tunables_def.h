// Every Herald tunable, one entry each: HERALD_TUNABLE(type, name, default,
// meaning). Included twice by common/tunables.h (no include guard); the
// Options structs and the binaries' flags take their defaults from the
// constants it makes, and docs/configuration.md's table is checked against
// it (common/tunables_test). Add a tunable here, never as a literal
// default elsewhere.

// ---------------------------------------------------------------- RPC
HERALD_TUNABLE(int64_t, kControlDeadlineMs, 10000,
               "deadline of a control call to a PS shard (start, end, iteration done, "
               "checkpoint, stats)")
HERALD_TUNABLE(int64_t, kDataDeadlineMs, 60000,
               "deadline of an embedding data call (fetch, push, write-back); a fetch may "
               "wait for the previous iteration's commit")
HERALD_TUNABLE(int64_t, kMaxMessageBytes, 256 << 20,
               "largest gRPC message a server or channel accepts")
HERALD_TUNABLE(int64_t, kMaxRequestBytes, 64 << 20,
               "a PS data request, or a fetch's answer at 1 KiB per row, larger than this is "
               "split; a quarter of kMaxMessageBytes, so rows up to 4 KiB still fit")
HERALD_TUNABLE(int64_t, kReportDeadlineMs, 10000,
               "deadline of a worker's call to the scheduler during a job: a step report, an "
               "evaluation's predictions, an error report, a rendezvous key set")
HERALD_TUNABLE(int64_t, kRendezvousGetMarginMs, 5000,
               "a worker's rendezvous get may take this much longer than the wait it asks the "
               "scheduler for")
HERALD_TUNABLE(int64_t, kMaxRendezvousWaitMs, 120000,
               "longest the scheduler holds a rendezvous get waiting for its keys")
HERALD_TUNABLE(int64_t, kDenseUploadDeadlineMs, 120000,
               "deadline of rank 0's upload of the dense parameters (a checkpoint's or the "
               "final model's) to the scheduler")
HERALD_TUNABLE(int64_t, kCliCallDeadlineMs, 30000,
               "deadline of a heraldctl call to the scheduler (submit, status, cancel, nodes)")
HERALD_TUNABLE(int64_t, kCliExportDeadlineMs, 3600000,
               "deadline of heraldctl export, which writes every embedding row")
HERALD_TUNABLE(int64_t, kCliConnectWaitMs, 10000,
               "how long a heraldctl call (submit, status, cancel, export, nodes) waits for the "
               "scheduler to accept its connection (one still starting) before it fails")
HERALD_TUNABLE(int64_t, kCliWatchReconnectMs, 60000,
               "how long heraldctl watch keeps watching again after it lost the scheduler "
               "(a failed connection, a scheduler restart) before it gives up")
HERALD_TUNABLE(int64_t, kUcxBufferPoolBytes, 256 << 20,
               "UCX message buffers of 64 KiB and more kept for reuse per process (requests, "
               "fetch replies, row exchanges); beyond it a returned buffer is freed")

// ---------------------------------------------------------------- membership
HERALD_TUNABLE(int64_t, kHeartbeatIntervalMs, 1000,
               "heartbeat period the scheduler asks of every node (--heartbeat_ms)")
HERALD_TUNABLE(int64_t, kLivenessTimeoutMs, 10000,
               "silence after which a node is dead and its job fails (--liveness_timeout_ms); "
               "lower detects failures sooner, higher tolerates pauses")
HERALD_TUNABLE(int64_t, kRegisterRetryMs, 1000,
               "wait between failed registrations with an unreachable scheduler")
HERALD_TUNABLE(int64_t, kMembershipCallDeadlineMs, 5000,
               "deadline of a node's registration or heartbeat call to the scheduler")

// ---------------------------------------------------------------- scheduler
HERALD_TUNABLE(int64_t, kStepQueueCapacity, 4,
               "steps queued per worker ahead of it: the step stream's back-pressure bound "
               "(--step_queue)")
HERALD_TUNABLE(int64_t, kJoinWaitMs, 5000,
               "longest a worker's JoinJob call is held waiting for a job to start; the "
               "worker asks again after an empty answer")
HERALD_TUNABLE(int64_t, kJobHistoryPoints, 512,
               "points a job's history keeps (heraldctl status --history); past that it keeps "
               "every 2nd iteration, then every 4th, ...")
HERALD_TUNABLE(int64_t, kEvalMaxSamples, 100000,
               "held-out samples an evaluation during a job scores when eval.max_samples is 0")
HERALD_TUNABLE(int64_t, kEvalBatchSize, 4096,
               "samples per forward pass of an evaluation when eval.batch_size is 0")
HERALD_TUNABLE(int64_t, kPlannerThreads, 0,
               "threads planning a batch's tables at once, 0: one per core (at most 64); plans "
               "are the same for any value (--planner_threads)")
HERALD_TUNABLE(int64_t, kReadAheadBatches, 2,
               "global batches the loader reads ahead of planning when data.read_ahead_batches "
               "is 0; the communication plan of batch t needs t+1 and t+2")
HERALD_TUNABLE(int64_t, kSchedulerPollMs, 200,
               "how often the scheduler's waits wake to check cancellation and node liveness")
HERALD_TUNABLE(int64_t, kJobJoinTimeoutMs, 120000,
               "how long a started job waits for every worker to join it")

// ---------------------------------------------------------------- parameter server
HERALD_TUNABLE(int64_t, kPsThreads, 4,
               "threads serving one request's keys and commits (herald_ps --threads 0 takes "
               "one per core)")
HERALD_TUNABLE(int64_t, kStripesPerTable, 16, "lock stripes per table within a request (--stripes)")
HERALD_TUNABLE(int64_t, kIterationsAhead, 4,
               "iterations a worker's data calls may run ahead of the last commit")
HERALD_TUNABLE(int64_t, kPsWaitMs, 60000, "longest a fetch waits for the commit it depends on")
HERALD_TUNABLE(int64_t, kCheckpointProgressLogMs, 10000,
               "a PS checkpoint that takes longer logs how far it got this often")

// ---------------------------------------------------------------- worker and data
HERALD_TUNABLE(int64_t, kGlooTimeoutMs, 60000, "deadline of a Gloo rendezvous or collective")
HERALD_TUNABLE(int64_t, kAllReduceBucketBytes, 1 << 20,
               "dense gradients final during the backward that start an all-reduce bucket "
               "(CPU workers under Gloo)")
HERALD_TUNABLE(int64_t, kPrefetchSteps, 2,
               "steps ahead a worker requests the rows its plan marks early (1..3: at most "
               "their early distance; --prefetch_steps)")
HERALD_TUNABLE(int64_t, kReaderBufferBytes, 4 << 20,
               "read buffer of the TSV and binary readers (grows for longer lines)")
HERALD_TUNABLE(int64_t, kFollowPollMs, 100,
               "data.follow: how often the followed directory is listed while no new file is "
               "there (also how soon a cancelled job's reader notices)")
HERALD_TUNABLE(int64_t, kMaxMalformedReported, 100,
               "malformed records kept for reports (all are counted)")
