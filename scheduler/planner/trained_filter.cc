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

void TrainedFilter::Save(StateWriter* out) const {
  std::vector<uint32_t> places;
  std::vector<uint64_t> nonzero;
  for (size_t i = 0; i < words_.size() && places.size() < words_.size() / 3; ++i) {
    if (words_[i] == 0) continue;
    places.push_back(static_cast<uint32_t>(i));
    nonzero.push_back(words_[i]);
  }
  const bool sparse = places.size() < words_.size() / 3;
  out->Pod<uint8_t>(sparse);
  if (sparse) {
    out->Vec(places);
    out->Vec(nonzero);
  } else {
    out->Vec(words_);
  }
}

bool TrainedFilter::Load(StateReader* in) {
  uint8_t sparse;
  if (!in->Pod("trained_filter", &sparse)) return false;
  std::vector<uint64_t> words;
  if (sparse == 0) {
    if (!in->Vec("trained_filter", &words)) return false;
    if (words.size() != words_.size()) {
      return in->Invalid("trained_filter",
                         absl::StrCat(words.size() * 64, " bits, the planner's has ", bits()));
    }
  } else {
    std::vector<uint32_t> places;
    std::vector<uint64_t> nonzero;
    if (!in->Vec("trained_filter.places", &places) || !in->Vec("trained_filter.words", &nonzero)) {
      return false;
    }
    if (places.size() != nonzero.size()) {
      return in->Invalid("trained_filter.places", "not one place per word");
    }
    words.assign(words_.size(), 0);
    for (size_t i = 0; i < places.size(); ++i) {
      if (places[i] >= words.size() || (i > 0 && places[i] <= places[i - 1])) {
        return in->Invalid(
            "trained_filter.places",
            absl::StrCat("place ", places[i], " out of order or past ", words.size(), " words"));
      }
      words[places[i]] = nonzero[i];
    }
  }
  words_ = std::move(words);
  return true;
}

}  // namespace herald::scheduler
