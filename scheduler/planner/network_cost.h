#pragma once
// A prediction of one iteration's time on a cluster whose every NIC moves
// `link_gbps` each way, from the rows a plan moves (PlanCounts per worker),
// for planning past the machine at hand (`heraldctl simulate --link-gbps`).
//
// The model is the worker's step as it runs today: fetch, compute, then
// the all-reduce beside the push, write-back and worker-to-worker exchange
// (the worker reduces on its own thread), each phase as long as its
// busiest NIC needs for the phase's bytes plus its round trips; the
// all-reduce and the three after compute take together the longest of:
// the all-reduce, the three in turn, and the busiest worker NIC's bytes of
// all four at once (the all-reduce's time hidden so is `overlapped_ms`):
//   fetch       PS → workers: key + version + row_floats values per row
//               (PS NICs share the keys evenly; each worker receives its own)
//   push        workers → PS: key + dim gradient values per row
//   write-back  workers → PS: key + version + row_floats values per row
//   exchange    worker → worker: a hand-off carries the row with its state,
//               a served copy or an owner's gradient dim values (+ key); a
//               worker receives about what it sends
//   all-reduce  ring over the workers: 2 (W - 1) / W × 4 × dense_params
//               bytes each way per worker, 2 (W - 1) steps
//   compute     compute_ms_per_sample × samples per worker
// A round trip is twice the one-way latency. `host_gbps` (0: not modelled)
// is the rate at which a host processes a phase's bytes besides sending
// them (serialising, copying, reducing; not overlapped with the wire
// today): each phase's busiest bytes then cost bytes / link + bytes / host.
// Framing and TCP's ramp are not modelled; the measured lab runs check the
// prediction (docs/benchmarks.md).

#include <cstdint>
#include <vector>

#include "scheduler/planner/planner.h"

namespace herald::scheduler {

struct ClusterModel {
  double link_gbps = 0;       // every NIC, each direction; must be > 0
  double latency_us = 0;      // one way
  double host_gbps = 0;       // a host's processing rate of payload bytes; 0: free
  uint32_t ps_hosts = 1;      // the PS shards' hosts (a PS NIC each)
  uint32_t dim = 64;          // embedding dimension
  uint32_t row_floats = 128;  // values + optimizer state per row
  uint64_t dense_params = 0;  // all-reduced floats
  double compute_ms_per_sample = 0;
  uint32_t samples_per_worker = 1;
};

struct PhaseTimes {
  double fetch_ms = 0, compute_ms = 0, allreduce_ms = 0, push_ms = 0, writeback_ms = 0,
         exchange_ms = 0;
  double overlapped_ms = 0;  // of allreduce_ms, run beside push, write-back, exchange
  double total_ms() const {
    return fetch_ms + compute_ms + allreduce_ms + push_ms + writeback_ms + exchange_ms -
           overlapped_ms;
  }
  // Embedding transfers: fetch, push, write-back and exchange.
  double transfer_ms() const { return fetch_ms + push_ms + writeback_ms + exchange_ms; }
  PhaseTimes& operator+=(const PhaseTimes& o);
};

// One iteration whose workers moved `workers[w]` (by rank).
PhaseTimes PredictIteration(const ClusterModel& model, const std::vector<PlanCounts>& workers);

}  // namespace herald::scheduler
