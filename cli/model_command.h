#pragma once
// heraldctl model SPEC: the job's model as the worker builds it. A graph
// model (model.graph): each node with its layer, inputs, output shape and
// parameter count, and the total; a built-in kind: its name and parameter
// count. Checks the model section as submit would (exit 2 naming the field).

#include <string>

namespace herald::cli {

// Prints to stdout (JSON with `json`); returns the exit code. With
// `initial_dense` (a path), also writes the model's initial dense
// parameters there, as the workers start from them: float32 little-endian
// in the layers' reservation order (docs/export.md's dense layout), for
// replicating a job's training elsewhere.
int RunModel(const std::string& spec_path, bool json, const std::string& initial_dense = "");

}  // namespace herald::cli
