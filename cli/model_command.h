#pragma once
// heraldctl model SPEC: the job's model as the worker builds it. A graph
// model (model.graph): each node with its layer, inputs, output shape and
// parameter count, and the total; a built-in kind: its name and parameter
// count. Checks the model section as submit would (exit 2 naming the field).

#include <string>

namespace herald::cli {

// Prints to stdout (JSON with `json`); returns the exit code.
int RunModel(const std::string& spec_path, bool json);

}  // namespace herald::cli
