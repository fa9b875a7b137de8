#include "worker/cache/step.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace herald::worker {
namespace {

template <typename T>
absl::Status Unpack(const std::string& bytes, const std::string& field, std::vector<T>* out) {
  if (bytes.size() % sizeof(T) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", bytes.size(),
                                                   " bytes is not a multiple of ", sizeof(T)));
  }
  out->resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(out->data(), bytes.data(), bytes.size());
  return absl::OkStatus();
}

template <typename T>
std::string Pack(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

absl::Status SameCount(size_t a, size_t b, const std::string& field_a, const std::string& field_b) {
  if (a == b) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field_a, " has ", a, " entries but ", field_b, " has ", b));
}

}  // namespace

absl::StatusOr<Step> DecodeWorkerStep(const proto::WorkerStep& in, uint32_t num_tables,
                                      uint32_t num_dense) {
  Step step;
  step.job_id = in.job_id();
  step.iteration = in.iteration();
  step.global_batch_size = in.global_batch_size();
  const proto::StepSamples& s = in.samples();
  const uint32_t n = s.num_samples();
  step.num_samples = n;
  if (step.global_batch_size < n || step.global_batch_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("global_batch_size: ", step.global_batch_size,
                                                   " must be >= num_samples ", n, " and > 0"));
  }
  HERALD_RETURN_IF_ERROR(Unpack(s.labels(), "samples.labels", &step.labels));
  HERALD_RETURN_IF_ERROR(SameCount(step.labels.size(), n, "samples.labels", "samples.num_samples"));
  for (float label : step.labels) {
    if (!(label == 0.0f || label == 1.0f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("samples.labels: ", label, " is not 0 or 1"));
    }
  }
  HERALD_RETURN_IF_ERROR(Unpack(s.dense(), "samples.dense", &step.dense));
  if (step.dense.size() != static_cast<size_t>(n) * num_dense) {
    return absl::InvalidArgumentError(absl::StrCat("samples.dense: ", step.dense.size(),
                                                   " floats, want num_samples × num_dense = ",
                                                   static_cast<size_t>(n) * num_dense));
  }
  for (float v : step.dense) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("samples.dense: non-finite value");
  }
  step.samples.resize(num_tables);
  std::vector<bool> seen(num_tables, false);
  for (int i = 0; i < s.tables_size(); ++i) {
    const auto& t = s.tables(i);
    const std::string field = absl::StrCat("samples.tables[", i, "]");
    if (t.table_id() >= num_tables || seen[t.table_id()]) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".table_id: ", t.table_id(),
                                                     " is unknown or repeated (job has ",
                                                     num_tables, " tables)"));
    }
    seen[t.table_id()] = true;
    TableSamples& out = step.samples[t.table_id()];
    HERALD_RETURN_IF_ERROR(Unpack(t.offsets(), field + ".offsets", &out.offsets));
    HERALD_RETURN_IF_ERROR(Unpack(t.slots(), field + ".slots", &out.slots));
    if (out.offsets.size() != n + 1 || out.offsets[0] != 0 || out.offsets[n] != out.slots.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".offsets: want num_samples + 1 = ", n + 1,
          " offsets from 0 to the number of slots ", out.slots.size()));
    }
    for (uint32_t j = 0; j < n; ++j) {
      if (out.offsets[j] > out.offsets[j + 1]) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".offsets: decreasing at sample ", j));
      }
    }
  }
  for (uint32_t t = 0; t < num_tables; ++t) {
    if (!seen[t]) {
      return absl::InvalidArgumentError(absl::StrCat("samples.tables: table ", t, " is missing"));
    }
  }
  step.plan.resize(num_tables);
  std::vector<bool> planned(num_tables, false);
  for (int i = 0; i < in.plan().tables_size(); ++i) {
    const auto& ops = in.plan().tables(i);
    const std::string field = absl::StrCat("plan.tables[", i, "]");
    if (ops.table_id() >= num_tables || planned[ops.table_id()]) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".table_id: ", ops.table_id(),
                                                     " is unknown or repeated"));
    }
    planned[ops.table_id()] = true;
    TablePlan& p = step.plan[ops.table_id()];
    HERALD_RETURN_IF_ERROR(Unpack(ops.evict_slots(), field + ".evict_slots", &p.evict_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.evict_keys(), field + ".evict_keys", &p.evict_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.fetch_keys(), field + ".fetch_keys", &p.fetch_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.fetch_slots(), field + ".fetch_slots", &p.fetch_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.fetch_early(), field + ".fetch_early", &p.fetch_early));
    HERALD_RETURN_IF_ERROR(Unpack(ops.owned_slots(), field + ".owned_slots", &p.owned_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.shared_slots(), field + ".shared_slots", &p.shared_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.shared_keys(), field + ".shared_keys", &p.shared_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.writeback_slots(), field + ".writeback_slots", &p.writeback_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.writeback_keys(), field + ".writeback_keys", &p.writeback_keys));
    HERALD_RETURN_IF_ERROR(SameCount(p.evict_slots.size(), p.evict_keys.size(), field + ".evict_slots",
                            field + ".evict_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.fetch_slots.size(), p.fetch_keys.size(), field + ".fetch_slots",
                            field + ".fetch_keys"));
    if (!p.fetch_early.empty()) {
      HERALD_RETURN_IF_ERROR(SameCount(p.fetch_early.size(), p.fetch_keys.size(), field + ".fetch_early",
                              field + ".fetch_keys"));
    }
    HERALD_RETURN_IF_ERROR(SameCount(p.shared_slots.size(), p.shared_keys.size(),
                            field + ".shared_slots", field + ".shared_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.writeback_slots.size(), p.writeback_keys.size(),
                            field + ".writeback_slots", field + ".writeback_keys"));
    HERALD_RETURN_IF_ERROR(Unpack(ops.receive_slots(), field + ".receive_slots", &p.receive_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.receive_keys(), field + ".receive_keys", &p.receive_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.send_slots(), field + ".send_slots", &p.send_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.send_keys(), field + ".send_keys", &p.send_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.send_to(), field + ".send_to", &p.send_to));
    HERALD_RETURN_IF_ERROR(Unpack(ops.incoming_keys(), field + ".incoming_keys", &p.incoming_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.incoming_from(), field + ".incoming_from", &p.incoming_from));
    HERALD_RETURN_IF_ERROR(SameCount(p.receive_slots.size(), p.receive_keys.size(),
                                     field + ".receive_slots", field + ".receive_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.send_slots.size(), p.send_keys.size(),
                                     field + ".send_slots", field + ".send_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.send_slots.size(), p.send_to.size(),
                                     field + ".send_slots", field + ".send_to"));
    HERALD_RETURN_IF_ERROR(SameCount(p.incoming_keys.size(), p.incoming_from.size(),
                                     field + ".incoming_keys", field + ".incoming_from"));
    HERALD_RETURN_IF_ERROR(Unpack(ops.receive_served(), field + ".receive_served", &p.receive_served));
    HERALD_RETURN_IF_ERROR(Unpack(ops.send_served(), field + ".send_served", &p.send_served));
    HERALD_RETURN_IF_ERROR(Unpack(ops.incoming_served(), field + ".incoming_served", &p.incoming_served));
    HERALD_RETURN_IF_ERROR(Unpack(ops.remote_slots(), field + ".remote_slots", &p.remote_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.remote_keys(), field + ".remote_keys", &p.remote_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.remote_to(), field + ".remote_to", &p.remote_to));
    HERALD_RETURN_IF_ERROR(Unpack(ops.gather_slots(), field + ".gather_slots", &p.gather_slots));
    HERALD_RETURN_IF_ERROR(Unpack(ops.gather_keys(), field + ".gather_keys", &p.gather_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.gather_from(), field + ".gather_from", &p.gather_from));
    HERALD_RETURN_IF_ERROR(Unpack(ops.init_keys(), field + ".init_keys", &p.init_keys));
    HERALD_RETURN_IF_ERROR(Unpack(ops.init_slots(), field + ".init_slots", &p.init_slots));
    HERALD_RETURN_IF_ERROR(SameCount(p.init_slots.size(), p.init_keys.size(),
                                     field + ".init_slots", field + ".init_keys"));
    // Flags: empty (all 0) or one per entry.
    auto flags = [&](const std::vector<uint8_t>& f, size_t n, const char* name, const char* of) {
      return f.empty() ? absl::OkStatus() : SameCount(f.size(), n, field + name, field + of);
    };
    HERALD_RETURN_IF_ERROR(flags(p.receive_served, p.receive_slots.size(), ".receive_served",
                                 ".receive_slots"));
    HERALD_RETURN_IF_ERROR(flags(p.send_served, p.send_slots.size(), ".send_served", ".send_slots"));
    HERALD_RETURN_IF_ERROR(flags(p.incoming_served, p.incoming_keys.size(), ".incoming_served",
                                 ".incoming_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.remote_slots.size(), p.remote_keys.size(),
                                     field + ".remote_slots", field + ".remote_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.remote_slots.size(), p.remote_to.size(),
                                     field + ".remote_slots", field + ".remote_to"));
    HERALD_RETURN_IF_ERROR(SameCount(p.gather_slots.size(), p.gather_keys.size(),
                                     field + ".gather_slots", field + ".gather_keys"));
    HERALD_RETURN_IF_ERROR(SameCount(p.gather_slots.size(), p.gather_from.size(),
                                     field + ".gather_slots", field + ".gather_from"));
  }
  return step;
}

proto::WorkerStep EncodeWorkerStep(const Step& step) {
  proto::WorkerStep out;
  out.set_job_id(step.job_id);
  out.set_iteration(step.iteration);
  out.set_global_batch_size(step.global_batch_size);
  proto::StepSamples* s = out.mutable_samples();
  s->set_num_samples(step.num_samples);
  s->set_labels(Pack(step.labels));
  s->set_dense(Pack(step.dense));
  for (size_t t = 0; t < step.samples.size(); ++t) {
    auto* table = s->add_tables();
    table->set_table_id(static_cast<uint32_t>(t));
    table->set_offsets(Pack(step.samples[t].offsets));
    table->set_slots(Pack(step.samples[t].slots));
  }
  for (size_t t = 0; t < step.plan.size(); ++t) {
    const TablePlan& p = step.plan[t];
    auto* ops = out.mutable_plan()->add_tables();
    ops->set_table_id(static_cast<uint32_t>(t));
    ops->set_evict_slots(Pack(p.evict_slots));
    ops->set_evict_keys(Pack(p.evict_keys));
    ops->set_fetch_keys(Pack(p.fetch_keys));
    ops->set_fetch_slots(Pack(p.fetch_slots));
    ops->set_fetch_early(Pack(p.fetch_early));
    ops->set_owned_slots(Pack(p.owned_slots));
    ops->set_shared_slots(Pack(p.shared_slots));
    ops->set_shared_keys(Pack(p.shared_keys));
    ops->set_writeback_slots(Pack(p.writeback_slots));
    ops->set_writeback_keys(Pack(p.writeback_keys));
    ops->set_receive_slots(Pack(p.receive_slots));
    ops->set_receive_keys(Pack(p.receive_keys));
    ops->set_send_slots(Pack(p.send_slots));
    ops->set_send_keys(Pack(p.send_keys));
    ops->set_send_to(Pack(p.send_to));
    ops->set_incoming_keys(Pack(p.incoming_keys));
    ops->set_incoming_from(Pack(p.incoming_from));
    ops->set_receive_served(Pack(p.receive_served));
    ops->set_send_served(Pack(p.send_served));
    ops->set_incoming_served(Pack(p.incoming_served));
    ops->set_remote_slots(Pack(p.remote_slots));
    ops->set_remote_keys(Pack(p.remote_keys));
    ops->set_remote_to(Pack(p.remote_to));
    ops->set_gather_slots(Pack(p.gather_slots));
    ops->set_gather_keys(Pack(p.gather_keys));
    ops->set_gather_from(Pack(p.gather_from));
    ops->set_init_keys(Pack(p.init_keys));
    ops->set_init_slots(Pack(p.init_slots));
  }
  return out;
}

}  // namespace herald::worker
