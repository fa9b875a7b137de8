#include "scheduler/planner/trained_filter.h"

#include "absl/strings/str_cat.h"
#include "common/rng.h"

namespace herald::scheduler {
namespace {

// The i-th bit index of `key` (double hashing over two mixes of the key).
uint64_t BitOf(Key key, int i, uint64_t mask) {
  const uint64_t a = Mix64(key);
  const uint64_t b = Mix64(key ^ 0x9e3779b97f4a7c15ull) | 1;
  return (a + static_cast<uint64_t>(i) * b) & mask;
}

}  // namespace

TrainedFilter::TrainedFilter(uint64_t bits) : mask_(bits - 1), words_(bits / 64, 0) {}

void TrainedFilter::Add(Key key) {
  for (int i = 0; i < kHashes; ++i) {
    const uint64_t bit = BitOf(key, i, mask_);
    words_[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
}

bool TrainedFilter::MayContain(Key key) const {
  for (int i = 0; i < kHashes; ++i) {
    const uint64_t bit = BitOf(key, i, mask_);
    if (((words_[bit >> 6] >> (bit & 63)) & 1) == 0) return false;
  }
  return true;
}

bool TrainedFilter::Load(StateReader* in) {
  std::vector<uint64_t> words;
  if (!in->Vec("trained_filter", &words)) return false;
  if (words.size() != words_.size()) {
    return in->Invalid("trained_filter",
                       absl::StrCat(words.size() * 64, " bits, the planner's has ", bits()));
  }
  words_ = std::move(words);
  return true;
}

}  // namespace herald::scheduler
