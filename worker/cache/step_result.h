#pragma once
// What one worker step did and where its time went (StepExecutor::Run).

#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ps_server/client/ps_client.h"

namespace herald::worker {

// Host time since `start` in ms, as the phase times count it.
inline double MillisSince(absl::Time start) {
  return absl::ToDoubleMilliseconds(absl::Now() - start);
}

struct PhaseTimes {
  double fetch_ms = 0;
  double compute_ms = 0;
  double allreduce_ms = 0;
  double push_ms = 0;
  double writeback_ms = 0;
  // Host time checking steps against the cache and packing their lists for
  // the device: this step's where it was not done ahead, and the next
  // step's, done ahead during this one.
  double stage_ms = 0;
  // Time waiting for the shards to take the iteration-done report (where
  // it completed the iteration, for the commit).
  double commit_ms = 0;
};

struct StepResult {
  double loss_sum = 0;
  uint32_t num_samples = 0;
  PhaseTimes times;
  // Device time of the step's training: from before forward to after the
  // cache rows' updates, by device events (a GPU's clock; a CPU device's
  // is the host's, so there it includes the all-reduce between). Not a
  // wait: it overlaps the phases.
  double device_ms = 0;
  uint64_t rows_fetched = 0;
  uint64_t rows_pushed = 0;  // gradient rows sent to the PS
  uint64_t rows_written_back = 0;
  // Rows sent to another worker: hand-offs, served copies and gradients
  // sent to a row's owner.
  uint64_t rows_handed_off = 0;
  uint64_t rows_initialized = 0;  // never trained: initialised here, not fetched
  uint64_t rows_prefetched = 0;   // of rows_fetched: requested during the step before (overlap)
  // Rows the PS shards read from disk for the iterations this worker's
  // report committed (ps::PsClient::IterationDone).
  ps::PsDiskReads ps_disk_reads;
  uint64_t bytes_moved = 0;  // payload bytes of the three above
};

}  // namespace herald::worker
