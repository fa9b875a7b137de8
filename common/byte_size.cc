#include "common/byte_size.h"

#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace herald {

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text, "\" is not a size in bytes (a whole number, optionally with K, M, G or T)"));
  };
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  if (absl::EndsWith(s, "IB")) {
    s.resize(s.size() - 2);
  } else if (s.size() > 1 && s.back() == 'B' &&
             !std::isdigit(static_cast<unsigned char>(s[s.size() - 2]))) {
    s.pop_back();
  }
  int shift = 0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift > 0) s.pop_back();
  }
  uint64_t n = 0;
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) || !absl::SimpleAtoi(s, &n)) {
    return bad();
  }
  if (shift > 0 && n > (UINT64_MAX >> shift)) return bad();
  return n << shift;
}

}  // namespace herald
