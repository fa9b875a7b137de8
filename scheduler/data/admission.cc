#include "scheduler/data/admission.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {

Admission::Admission(std::vector<uint32_t> min_counts)
    : min_counts_(std::move(min_counts)), tables_(min_counts_.size()) {}

std::vector<uint32_t> Admission::RuleOf(const proto::JobSpec& spec) {
  std::vector<uint32_t> min_counts;
  bool any = false;
  for (const proto::TableSpec& t : spec.tables()) {
    min_counts.push_back(t.admission().min_count());
    any = any || t.admission().min_count() > 1;
  }
  return any ? min_counts : std::vector<uint32_t>();
}

void Admission::Filter(uint64_t index, data::KeyBatch* batch) {
  absl::MutexLock lock(&mu_);
  for (size_t t = 0; t < batch->tables.size() && t < min_counts_.size(); ++t) {
    if (min_counts_[t] <= 1) continue;
    auto& counts = tables_[t];
    data::KeyBatch::Table& table = batch->tables[t];
    // Count every lookup first: a key reaching min_count anywhere in this
    // batch is admitted for all of its lookups here.
    for (Key key : table.keys) {
      Entry& e = counts[key];
      if (e.count++ == 0) ++counts_.waiting;
      if (e.count >= min_counts_[t] && e.admitted_at == kNotAdmitted) {
        e.admitted_at = index;
        --counts_.waiting;
        ++counts_.admitted;
      }
    }
    const size_t before = table.keys.size();
    table.KeepKeys([&](Key key) { return counts.find(key)->second.admitted_at != kNotAdmitted; });
    counts_.dropped += before - table.keys.size();
  }
  recent_.emplace_back(index, counts_);
  if (recent_.size() > 64) recent_.pop_front();
}

void Admission::FilterAdmittedBy(uint64_t through, data::KeyBatch* batch) const {
  absl::MutexLock lock(&mu_);
  for (size_t t = 0; t < batch->tables.size() && t < min_counts_.size(); ++t) {
    if (min_counts_[t] <= 1) continue;
    const auto& counts = tables_[t];
    batch->tables[t].KeepKeys([&](Key key) {
      auto it = counts.find(key);
      return it != counts.end() && it->second.admitted_at <= through;
    });
  }
}

Admission::Counts Admission::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

Admission::Counts Admission::CountsThrough(uint64_t index) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [at, counts] : recent_) {
    if (at == index) return counts;
  }
  return counts_;
}

void Admission::Save(StateWriter* out) const {
  absl::MutexLock lock(&mu_);
  out->Vec(std::vector<uint32_t>(min_counts_));
  out->Pod(counts_.dropped);
  for (const auto& table : tables_) {
    // In key order: the same state saves to the same bytes.
    std::vector<std::pair<Key, Entry>> entries(table.begin(), table.end());
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Key> keys;
    std::vector<uint64_t> counts, admitted_at;
    for (const auto& [key, e] : entries) {
      keys.push_back(key);
      counts.push_back(e.count);
      admitted_at.push_back(e.admitted_at);
    }
    out->Vec(keys);
    out->Vec(counts);
    out->Vec(admitted_at);
  }
}

void Admission::CopyFrom(const Admission& other) {
  if (&other == this) return;
  absl::MutexLock theirs(&other.mu_);
  absl::MutexLock mine(&mu_);
  tables_ = other.tables_;
  counts_ = other.counts_;
  recent_ = other.recent_;
}

bool Admission::Load(StateReader* in) {
  std::vector<uint32_t> min_counts;
  if (!in->Vec("admission.min_counts", &min_counts)) return false;
  if (min_counts != min_counts_) {
    return in->Invalid("admission.min_counts", "saved under another admission rule");
  }
  absl::MutexLock lock(&mu_);
  counts_ = {};
  recent_.clear();
  if (!in->Pod("admission.dropped", &counts_.dropped)) return false;
  for (auto& table : tables_) {
    std::vector<Key> keys;
    std::vector<uint64_t> counts, admitted_at;
    if (!in->Vec("admission.keys", &keys) || !in->Vec("admission.counts", &counts) ||
        !in->Vec("admission.admitted_at", &admitted_at)) {
      return false;
    }
    if (counts.size() != keys.size() || admitted_at.size() != keys.size()) {
      return in->Invalid("admission.counts", "not one count per key");
    }
    table.clear();
    table.reserve(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      table[keys[i]] = {counts[i], admitted_at[i]};
      (admitted_at[i] == kNotAdmitted ? counts_.waiting : counts_.admitted) += 1;
    }
  }
  return true;
}

}  // namespace herald::scheduler
