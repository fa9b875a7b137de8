#pragma once
// Logging façade over spdlog. Only main() calls InitLogging; libraries just log.
// INFO: lifecycle; WARN: recovered faults; ERROR: a failure that stops work;
// per-batch messages at DEBUG only.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

namespace herald {

// Sets the global level ("trace", "debug", "info", "warn", "error") and a pattern
// naming the process role and rank, e.g. "[ps:1]". Thread-safe, call once.
absl::Status InitLogging(absl::string_view role, int rank, absl::string_view level);

}  // namespace herald

#define HLOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define HLOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define HLOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define HLOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
