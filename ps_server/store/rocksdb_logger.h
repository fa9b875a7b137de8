#ifndef HERALD_PS_SERVER_STORE_ROCKSDB_LOGGER_H_
#define HERALD_PS_SERVER_STORE_ROCKSDB_LOGGER_H_

#include <rocksdb/env.h>

#include <cstdarg>
#include <memory>
#include <string>

namespace herald::ps {

// RocksDB's own messages (warnings and worse), written to the process's
// log with the store's path in front, instead of to a LOG file inside the
// store's directory. The store's disk may be the one that fills: RocksDB's
// file logger aborts the process (an assertion in Debian's build) when it
// writes again after a failed write, where this logger only loses nothing.
std::shared_ptr<rocksdb::Logger> ProcessLogFor(std::string store_path);

}  // namespace herald::ps

#endif  // HERALD_PS_SERVER_STORE_ROCKSDB_LOGGER_H_
