#include "ps_server/store/rocksdb_logger.h"

#include <cstdio>
#include <utility>

#include "common/logging.h"

namespace herald::ps {
namespace {

class ProcessLogger : public rocksdb::Logger {
 public:
  explicit ProcessLogger(std::string path) : Logger(rocksdb::WARN_LEVEL), path_(std::move(path)) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::WARN_LEVEL, format, ap); }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::HEADER_LEVEL) return;
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, ap);
    if (level >= rocksdb::ERROR_LEVEL) {
      HLOG_ERROR("rocksdb {}: {}", path_, line);
    } else {
      HLOG_WARN("rocksdb {}: {}", path_, line);
    }
  }

 private:
  const std::string path_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> ProcessLogFor(std::string store_path) {
  return std::make_shared<ProcessLogger>(std::move(store_path));
}

}  // namespace herald::ps
