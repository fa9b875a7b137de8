#include "scheduler/data/key_lifecycle.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace herald::scheduler {

KeyLifecycle::KeyLifecycle(std::vector<KeyRule> rules)
    : rules_(std::move(rules)), tables_(rules_.size()) {}

std::vector<KeyRule> KeyLifecycle::RuleOf(const proto::JobSpec& spec) {
  std::vector<KeyRule> rules;
  bool any = false;
  for (const proto::TableSpec& t : spec.tables()) {
    rules.push_back({t.admission().min_count(), t.expiry().after_iterations()});
    any = any || rules.back().active();
  }
  return any ? rules : std::vector<KeyRule>();
}

std::vector<KeyRule> KeyLifecycle::MinCounts(const std::vector<uint32_t>& min_counts) {
  std::vector<KeyRule> rules;
  for (uint32_t n : min_counts) rules.push_back({n, 0});
  return rules;
}

void KeyLifecycle::Filter(uint64_t index, data::KeyBatch* batch) {
  absl::MutexLock lock(&mu_);
  for (size_t t = 0; t < batch->tables.size() && t < rules_.size(); ++t) {
    const KeyRule& rule = rules_[t];
    data::KeyBatch::Table& table = batch->tables[t];
    table.expired.clear();
    if (!rule.active()) continue;
    Table& state = tables_[t];
    std::vector<Key>* seen = nullptr;
    if (rule.expires()) seen = &state.seen.emplace_back(SeenIn{index, {}}).keys;
    // Count every lookup first: a key reaching min_count anywhere in this
    // batch is admitted for all of its lookups here.
    for (Key key : table.keys) {
      Entry& e = state.entries[key];
      const bool first = e.count++ == 0;
      if (first && !rule.admits()) {
        e.admitted_at = index;
        ++counts_.admitted;
      } else if (first) {
        ++counts_.waiting;
      }
      if (rule.admits() && e.count >= rule.min_count && e.admitted_at == kNotAdmitted) {
        e.admitted_at = index;
        --counts_.waiting;
        ++counts_.admitted;
      }
      if (seen != nullptr && (first || e.last_seen != index)) seen->push_back(key);
      e.last_seen = index;
    }
    if (rule.admits()) {
      const size_t before = table.keys.size();
      table.KeepKeys(
          [&](Key key) { return state.entries.find(key)->second.admitted_at != kNotAdmitted; });
      counts_.dropped += before - table.keys.size();
    }
    if (rule.expires()) Expire(index, rule, &state, &table.expired);
  }
  recent_.emplace_back(index, counts_);
  if (recent_.size() > kRecentBatches) recent_.pop_front();
}

void KeyLifecycle::Expire(uint64_t index, const KeyRule& rule, Table* table,
                          std::vector<Key>* expired) {
  Deleted deleted{index, {}};
  // Keys last seen in batch u ≤ index − T: absent from the T batches since.
  while (!table->seen.empty() && table->seen.front().batch + rule.expire_after <= index) {
    const SeenIn& in = table->seen.front();
    for (Key key : in.keys) {
      auto it = table->entries.find(key);
      if (it == table->entries.end() || it->second.last_seen != in.batch) continue;  // seen since
      if (it->second.admitted_at == kNotAdmitted) {
        --counts_.waiting;
      } else {
        expired->push_back(key);
        deleted.rows.emplace_back(key, it->second.admitted_at);
        --counts_.admitted;
        ++counts_.expired;
      }
      table->entries.erase(it);
    }
    table->seen.pop_front();
  }
  std::sort(expired->begin(), expired->end());
  if (!deleted.rows.empty()) table->deleted.push_back(std::move(deleted));
  while (!table->deleted.empty() && table->deleted.front().batch + kRecentBatches <= index) {
    table->deleted.pop_front();
  }
}

void KeyLifecycle::FilterAdmittedBy(uint64_t through, data::KeyBatch* batch) const {
  absl::MutexLock lock(&mu_);
  for (size_t t = 0; t < batch->tables.size() && t < rules_.size(); ++t) {
    if (!rules_[t].active()) continue;
    const Table& state = tables_[t];
    // Rows deleted after `through` that existed then.
    absl::flat_hash_set<Key> deleted_since;
    for (const Deleted& d : state.deleted) {
      if (d.batch <= through) continue;
      for (const auto& [key, admitted_at] : d.rows) {
        if (admitted_at <= through) deleted_since.insert(key);
      }
    }
    batch->tables[t].KeepKeys([&](Key key) {
      auto it = state.entries.find(key);
      if (it != state.entries.end() && it->second.admitted_at <= through) return true;
      return deleted_since.contains(key);
    });
  }
}

KeyLifecycle::Counts KeyLifecycle::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

KeyLifecycle::Counts KeyLifecycle::CountsThrough(uint64_t index) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [at, counts] : recent_) {
    if (at == index) return counts;
  }
  return counts_;
}

void KeyLifecycle::Save(StateWriter* out) const {
  absl::MutexLock lock(&mu_);
  std::vector<uint32_t> min_counts;
  std::vector<uint64_t> expire_after;
  for (const KeyRule& r : rules_) {
    min_counts.push_back(r.min_count);
    expire_after.push_back(r.expire_after);
  }
  out->Vec(min_counts);
  out->Vec(expire_after);
  out->Pod(counts_.dropped);
  out->Pod(counts_.expired);
  for (const Table& table : tables_) {
    // In key order: the same state saves to the same bytes.
    std::vector<std::pair<Key, Entry>> entries(table.entries.begin(), table.entries.end());
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Key> keys;
    std::vector<uint64_t> counts, admitted_at, last_seen;
    for (const auto& [key, e] : entries) {
      keys.push_back(key);
      counts.push_back(e.count);
      admitted_at.push_back(e.admitted_at);
      last_seen.push_back(e.last_seen);
    }
    out->Vec(keys);
    out->Vec(counts);
    out->Vec(admitted_at);
    out->Vec(last_seen);
  }
}

void KeyLifecycle::CopyFrom(const KeyLifecycle& other) {
  if (&other == this) return;
  absl::MutexLock theirs(&other.mu_);
  absl::MutexLock mine(&mu_);
  tables_ = other.tables_;
  counts_ = other.counts_;
  recent_ = other.recent_;
}

bool KeyLifecycle::Load(StateReader* in) {
  std::vector<uint32_t> min_counts;
  std::vector<uint64_t> expire_after;
  if (!in->Vec("key_lifecycle.min_counts", &min_counts) ||
      !in->Vec("key_lifecycle.expire_after", &expire_after)) {
    return false;
  }
  if (min_counts.size() != rules_.size() || expire_after.size() != rules_.size()) {
    return in->Invalid("key_lifecycle.min_counts", "saved for another number of tables");
  }
  for (size_t t = 0; t < rules_.size(); ++t) {
    if (!(KeyRule{min_counts[t], expire_after[t]} == rules_[t])) {
      return in->Invalid("key_lifecycle.min_counts", "saved under other admission or expiry rules");
    }
  }
  absl::MutexLock lock(&mu_);
  counts_ = {};
  recent_.clear();
  if (!in->Pod("key_lifecycle.dropped", &counts_.dropped) ||
      !in->Pod("key_lifecycle.expired", &counts_.expired)) {
    return false;
  }
  for (size_t t = 0; t < tables_.size(); ++t) {
    Table& table = tables_[t];
    std::vector<Key> keys;
    std::vector<uint64_t> counts, admitted_at, last_seen;
    if (!in->Vec("key_lifecycle.keys", &keys) || !in->Vec("key_lifecycle.counts", &counts) ||
        !in->Vec("key_lifecycle.admitted_at", &admitted_at) ||
        !in->Vec("key_lifecycle.last_seen", &last_seen)) {
      return false;
    }
    if (counts.size() != keys.size() || admitted_at.size() != keys.size() ||
        last_seen.size() != keys.size()) {
      return in->Invalid("key_lifecycle.counts", "not one count per key");
    }
    table = Table();
    table.entries.reserve(keys.size());
    std::map<uint64_t, std::vector<Key>> seen;  // by last batch seen
    for (size_t i = 0; i < keys.size(); ++i) {
      table.entries[keys[i]] = {counts[i], admitted_at[i], last_seen[i]};
      (admitted_at[i] == kNotAdmitted ? counts_.waiting : counts_.admitted) += 1;
      if (rules_[t].expires()) seen[last_seen[i]].push_back(keys[i]);
    }
    for (auto& [batch, in_batch] : seen) table.seen.push_back({batch, std::move(in_batch)});
  }
  return true;
}

}  // namespace herald::scheduler
