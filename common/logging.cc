#include "common/logging.h"

#include "absl/strings/str_cat.h"

namespace herald {

absl::Status InitLogging(absl::string_view role, int rank, absl::string_view level) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level '", level, "' (trace|debug|info|warn|error|off)"));
  }
  spdlog::set_level(lvl);
  std::string who = rank >= 0 ? absl::StrCat(role, ":", rank) : std::string(role);
  spdlog::set_pattern(absl::StrCat("%Y-%m-%d %H:%M:%S.%e %^%L%$ [", who, "] %v"));
  return absl::OkStatus();
}

}  // namespace herald
