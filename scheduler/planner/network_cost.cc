#include "scheduler/planner/network_cost.h"

#include <algorithm>

namespace herald::scheduler {
namespace {

constexpr double kKey = 8, kVersion = 8, kFloat = 4;

// Milliseconds a phase takes: its busiest NIC's bytes at the link rate (and
// at the host's processing rate), plus `round_trips` round trips.
double PhaseMs(const ClusterModel& m, double busiest_bytes, double round_trips) {
  const double bytes_per_ms = m.link_gbps * 1e9 / 8 / 1e3;
  double ms = busiest_bytes / bytes_per_ms + round_trips * 2 * m.latency_us / 1e3;
  if (m.host_gbps > 0) ms += busiest_bytes / (m.host_gbps * 1e9 / 8 / 1e3);
  return ms;
}

// Each worker's bytes of one kind of row and the phase time when the PS
// NICs carry all of them too (`via_ps`) or only the workers' NICs do.
double Phase(const ClusterModel& m, const std::vector<PlanCounts>& workers,
             uint64_t PlanCounts::*rows, double bytes_per_row, bool via_ps) {
  double total = 0, busiest = 0;
  bool any = false;
  for (const PlanCounts& c : workers) {
    const double bytes = static_cast<double>(c.*rows) * bytes_per_row;
    total += bytes;
    busiest = std::max(busiest, bytes);
    any |= c.*rows > 0;
  }
  if (!any) return 0;
  if (via_ps) busiest = std::max(busiest, total / std::max<uint32_t>(1, m.ps_hosts));
  return PhaseMs(m, busiest, 1);
}

}  // namespace

PhaseTimes& PhaseTimes::operator+=(const PhaseTimes& o) {
  fetch_ms += o.fetch_ms;
  compute_ms += o.compute_ms;
  allreduce_ms += o.allreduce_ms;
  push_ms += o.push_ms;
  writeback_ms += o.writeback_ms;
  overlapped_ms += o.overlapped_ms;
  exchange_ms += o.exchange_ms;
  return *this;
}

PhaseTimes PredictIteration(const ClusterModel& m, const std::vector<PlanCounts>& workers) {
  PhaseTimes t;
  const double full_row = kKey + kVersion + kFloat * m.row_floats;
  const double values = kKey + kFloat * m.dim;
  t.fetch_ms = Phase(m, workers, &PlanCounts::fetched, full_row, true);
  t.push_ms = Phase(m, workers, &PlanCounts::pushed, values, true);
  t.writeback_ms = Phase(m, workers, &PlanCounts::written_back, full_row, true);
  double busiest_exchange = 0, busiest_sent = 0;  // sent: push + write-back + exchange
  for (const PlanCounts& c : workers) {
    const double handed = static_cast<double>(c.handoffs);
    const double served = static_cast<double>(c.transferred) - handed;
    const double exchange = handed * full_row + served * values;
    busiest_exchange = std::max(busiest_exchange, exchange);
    busiest_sent =
        std::max(busiest_sent, static_cast<double>(c.pushed) * values +
                                   static_cast<double>(c.written_back) * full_row + exchange);
  }
  if (busiest_exchange > 0) t.exchange_ms = PhaseMs(m, busiest_exchange, 1);
  const double w = static_cast<double>(workers.size());
  if (workers.size() > 1 && m.dense_params > 0) {
    const double reduced = 2 * (w - 1) / w * kFloat * static_cast<double>(m.dense_params);
    t.allreduce_ms = PhaseMs(m, reduced, w - 1);
    const double after = t.push_ms + t.writeback_ms + t.exchange_ms;
    const double together = PhaseMs(m, reduced + busiest_sent, w - 1);
    const double beside = std::max({t.allreduce_ms, after, together});
    t.overlapped_ms = std::max(0.0, t.allreduce_ms + after - beside);
  }
  t.compute_ms = m.compute_ms_per_sample * m.samples_per_worker;
  return t;
}

}  // namespace herald::scheduler
