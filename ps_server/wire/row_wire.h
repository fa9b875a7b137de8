#pragma once
// The binary messages of the embedding data path over UCX (fetch, push
// gradients, write back, and the fetch reply): fixed little-endian headers
// and 8-byte aligned arrays, so a received message is read in place as the
// spans a JobShard serves (shard_requests.h) and a fetch's rows are written
// by the shard straight into the reply. No protobuf, no per-row copy.
//
// Request:  RequestHeader (with the job's run, PsStartJobRequest.run_id),
//           the job id (padded to 8 bytes), then per block a
//           BlockHeader and its arrays: keys (u64 × count); push: gradients
//           (f32 × count × width, padded); write-back: rows (f32 × count ×
//           width, padded) and versions (u64 × count).
// Fetch reply: ReplyHeader, then per block a BlockHeader (width =
//           row_floats) and its rows (padded) and versions.
//
// Decoding checks everything against the buffer's size (magic, version,
// kind, counts, widths, no trailing bytes) and names what is wrong and at
// which byte offset; it never reads outside the buffer.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/ids.h"
#include "common/ucx/aligned_buffer.h"
#include "ps_server/wire/shard_requests.h"

namespace herald::ps::wire {

inline constexpr uint32_t kMagic = 0x31575248;  // "HRW1"
inline constexpr uint16_t kVersion = 2;         // 2: the run id in the header
inline constexpr uint32_t kMaxBlocks = 1 << 16;
inline constexpr uint32_t kMaxJobIdBytes = 1024;
inline constexpr uint32_t kMaxWidth = 1 << 16;  // floats per key

enum class Kind : uint16_t { kFetch = 1, kPush = 2, kWriteBack = 3, kFetchReply = 4 };

// Fetch flags.
inline constexpr uint32_t kEarly = 1;
inline constexpr uint32_t kReadOnly = 2;
// Bits 8..15: the early distance (FetchIn::early; 0 with kEarly: 1).
inline constexpr uint32_t kEarlyDistanceShift = 8;

struct RequestHeader {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t kind = 0;
  uint64_t iteration = 0;
  uint32_t worker = 0;
  uint32_t flags = 0;
  uint32_t num_blocks = 0;
  uint32_t job_id_bytes = 0;
  uint64_t run_id = 0;  // 0: unchecked
};
static_assert(sizeof(RequestHeader) == 40);

struct BlockHeader {
  uint32_t table = 0;
  uint32_t width = 0;  // fetch: 0; push: dim; write-back and reply: row_floats
  uint64_t count = 0;  // keys
};
static_assert(sizeof(BlockHeader) == 16);

struct ReplyHeader {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t kind = static_cast<uint16_t>(Kind::kFetchReply);
  uint32_t num_blocks = 0;
  uint32_t reserved = 0;
};
static_assert(sizeof(ReplyHeader) == 16);

// ---------------------------------------------------------------- encode

ucx::AlignedBuffer EncodeFetch(std::string_view job_id, uint64_t run_id, const FetchIn& request);
ucx::AlignedBuffer EncodePush(std::string_view job_id, uint64_t run_id, const PushIn& request);
ucx::AlignedBuffer EncodeWriteBack(std::string_view job_id, uint64_t run_id,
                                   const WriteBackIn& request);

// A fetch reply being built: room for every block's rows and versions, laid
// out once the row width of each block is known; Out(b) is where the shard
// writes block b.
class FetchReplyBuilder {
 public:
  // `counts[b]`: keys of block b; `row_floats[b]`: its width; `tables[b]`.
  FetchReplyBuilder(const std::vector<uint32_t>& tables, const std::vector<uint64_t>& counts,
                    const std::vector<uint32_t>& row_floats);
  RowsOut Out(size_t block);
  ucx::AlignedBuffer Finish() { return std::move(buffer_); }

 private:
  ucx::AlignedBuffer buffer_;
  std::vector<RowsOut> outs_;
};

// ---------------------------------------------------------------- decode

// A request read in place: the spans point into the buffer it was decoded
// from, which must outlive it.
struct Request {
  Kind kind = Kind::kFetch;
  std::string_view job_id;
  uint64_t run_id = 0;
  FetchIn fetch;
  PushIn push;
  WriteBackIn write_back;
};
// Errors: InvalidArgument "row message: ..." naming the field and offset.
absl::StatusOr<Request> DecodeRequest(const ucx::AlignedBuffer& message);

// One block of a fetch reply, in place.
struct RowsView {
  uint32_t table = 0;
  uint32_t row_floats = 0;
  absl::Span<const float> rows;
  absl::Span<const uint64_t> versions;
};
// Errors: InvalidArgument as DecodeRequest; DataLoss when the reply does not
// answer `expected_counts` (keys per block, in order).
absl::StatusOr<std::vector<RowsView>> DecodeFetchReply(
    const ucx::AlignedBuffer& reply, const std::vector<uint64_t>& expected_counts);

}  // namespace herald::ps::wire
