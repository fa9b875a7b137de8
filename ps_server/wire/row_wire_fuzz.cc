// Fuzz target: the UCX row message decoders. Invariants: no crash, no read
// outside the message, and every decoded request is consistent (each span
// inside the message, gradients and rows key count × width long).

#include <string>
#include <vector>

#include "common/data/fuzz/fuzz_target.h"
#include "ps_server/wire/row_wire.h"

using herald::Key;
using herald::ps::FetchIn;
using herald::ps::PushIn;
using herald::ps::WriteBackIn;
namespace wire = herald::ps::wire;

namespace {

std::string Bytes(const herald::ucx::AlignedBuffer& b) { return std::string(b.data(), b.size()); }

template <typename T>
void CheckInside(absl::Span<const T> span, const herald::ucx::AlignedBuffer& m) {
  if (span.empty()) return;
  const char* begin = reinterpret_cast<const char*>(span.data());
  const char* end = reinterpret_cast<const char*>(span.data() + span.size());
  if (begin < m.data() || end > m.data() + m.size()) FuzzFail("a span outside the message");
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  const std::vector<Key> keys = {1, 2, 3};
  const std::vector<float> floats = {1, 2, 3, 4, 5, 6};
  const std::vector<uint64_t> versions = {4, 5, 6};
  std::vector<std::string> seeds;
  seeds.push_back(
      Bytes(wire::EncodeFetch("job-1", 7, FetchIn{3, false, true, {{0, keys}, {2, keys}}})));
  seeds.push_back(Bytes(wire::EncodePush("job-1", 7, PushIn{3, 1, {{0, 2, keys, floats}}})));
  seeds.push_back(Bytes(
      wire::EncodeWriteBack("job-1", 7, WriteBackIn{3, 1, {{1, 2, keys, floats, versions}}})));
  wire::FetchReplyBuilder reply({0}, {3}, {2});
  seeds.push_back(Bytes(reply.Finish()));
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const herald::ucx::AlignedBuffer m = herald::ucx::AlignedBuffer::CopyOf(data, size);
  absl::StatusOr<wire::Request> r = wire::DecodeRequest(m);
  if (r.ok()) {
    for (const auto& b : r->fetch.blocks) CheckInside(b.keys, m);
    for (const auto& b : r->push.blocks) {
      CheckInside(b.keys, m);
      CheckInside(b.grads, m);
      if (b.grads.size() != b.keys.size() * b.dim) FuzzFail("gradients of the wrong length");
    }
    for (const auto& b : r->write_back.blocks) {
      CheckInside(b.keys, m);
      CheckInside(b.rows, m);
      CheckInside(b.versions, m);
      if (b.rows.size() != b.keys.size() * b.row_floats || b.versions.size() != b.keys.size()) {
        FuzzFail("rows or versions of the wrong length");
      }
    }
  } else if (r.status().code() != absl::StatusCode::kInvalidArgument) {
    FuzzFail("a decode error that is not INVALID_ARGUMENT");
  }
  for (const std::vector<uint64_t>& counts : {std::vector<uint64_t>{}, std::vector<uint64_t>{3}}) {
    absl::StatusOr<std::vector<wire::RowsView>> views = wire::DecodeFetchReply(m, counts);
    if (!views.ok()) continue;
    for (const wire::RowsView& v : *views) {
      CheckInside(v.rows, m);
      CheckInside(v.versions, m);
      if (v.rows.size() != v.versions.size() * v.row_floats) FuzzFail("reply rows of wrong length");
    }
  }
  return 0;
}
