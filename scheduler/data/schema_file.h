#pragma once
// data.schema_file: a data schema kept in its own file, shared by specs.

#include <string>

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace herald::scheduler {

// When data.schema_file is set: reads the file (text-format DataSchemaSpec)
// into data.schema and clears data.schema_file. A relative path is read
// from `base_dir`; with an empty `base_dir` it is refused (the scheduler
// has no directory to read it from). No file named: nothing changes.
// Errors: InvalidArgument naming data.schema_file and the path for a spec
// that also has data.schema, a file that cannot be read, or text that is
// not a DataSchemaSpec (with its line and column).
absl::Status InlineSchemaFile(proto::JobSpec* spec, const std::string& base_dir);

}  // namespace herald::scheduler
