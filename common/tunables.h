#pragma once
// Every Herald tunable in one list, each with its default and its trade-off.
// Binaries copy flags into these structs in their *_main.cc; libraries take
// them as constructor arguments and never read flags or the environment.

#include <cstdint>

namespace herald {

struct RpcTunables {
  // Deadline of a unary control call (register, status, kv). Short: these are cheap.
  int64_t control_deadline_ms = 5000;
  // Deadline of a bulk data call (fetch, push, write-back). Long enough for a
  // fetch that waits for the previous iteration's commit.
  int64_t data_deadline_ms = 60000;
  // Largest gRPC message in bytes; a row batch above this is split by the client.
  int max_message_bytes = 256 << 20;
};

struct MembershipTunables {
  // How often servers send heartbeats to the scheduler.
  int64_t heartbeat_interval_ms = 1000;
  // A node with no heartbeat for this long is dead (its job fails). Lower
  // detects failures faster, higher tolerates pauses (GC, swapping, debugger).
  int64_t liveness_timeout_ms = 10000;
};

struct DataTunables {
  // Global batches the loader reads ahead of training (L). The communication
  // plan for batch t needs t+1; more look-ahead costs memory.
  uint32_t read_ahead_batches = 2;
  // Read buffer of the TSV and binary readers.
  uint64_t reader_buffer_bytes = 4 << 20;
  // Malformed records kept for reporting (all are counted).
  uint32_t max_malformed_reported = 100;
};

}  // namespace herald
