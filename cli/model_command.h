#pragma once
// heraldctl model SPEC: the job's model as the worker builds it: each node
// of its graph (model.graph, or the built-in kind's graph) with its layer,
// inputs, output shape and parameter count, and the total. Checks the model
// section as submit would (exit 2 naming the field).

#include <string>

namespace herald::cli {

// Prints to stdout (JSON with `json`); returns the exit code. With
// `initial_dense` (a path), also writes the model's initial dense
// parameters there, as the workers start from them: float32 little-endian
// in the layers' reservation order (docs/export.md's dense layout), for
// replicating a job's training elsewhere. With `as_graph`, prints instead
// the model section as a graph in text format (a built-in kind written
// out), to paste into a spec and change.
int RunModel(const std::string& spec_path, bool json, const std::string& initial_dense = "",
             bool as_graph = false);

}  // namespace herald::cli
