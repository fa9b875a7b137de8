#pragma once
// The five built-in models (model.kind) written out as model graphs: a
// built-in kind is a shorthand, and the worker builds its graph
// (docs/configuration.md, "The built-in models as graphs"). Each graph is
// laid out so that it trains to the bits of the hand-written models it
// replaced: parameters in the same blocks, the same sums in the same order
// (tools/reference_fingerprint compared them).

#include "proto/job.pb.h"

namespace herald {

// The graph of spec.model()'s kind over the spec's features, with one
// head on the data's first label. REQUIRES: ValidateModelSpec's kind
// checks pass (model_spec_check.h).
proto::ModelGraphSpec BuiltinModelGraph(const proto::JobSpec& spec);

// spec.model().graph() when the spec has a graph, else BuiltinModelGraph.
proto::ModelGraphSpec ModelGraphOf(const proto::JobSpec& spec);

}  // namespace herald
