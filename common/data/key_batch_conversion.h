#pragma once
// data::SampleBlock -> KeyBatch: dense features transformed as log(1 + x)
// for x > 0 and 0 otherwise (missing counts as 0), keys copied per table.
// The scheduler's data loader applies the same transform.

#include "common/data/key_batch.h"
#include "common/data/sample_block.h"

namespace herald::data {

float TransformDense(int32_t value);

KeyBatch ToKeyBatch(const SampleBlock& block, size_t begin, size_t end);
// The same into `out`, reusing its memory.
void ToKeyBatch(const SampleBlock& block, size_t begin, size_t end, KeyBatch* out);

}  // namespace herald::data
