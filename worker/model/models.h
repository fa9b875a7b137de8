#pragma once
// The model of a job: its graph (model.graph, or a built-in kind written out
// as one by common/builtin_model_graph.h) over the feature matrix. Shapes are
// assumed valid here: the job spec is checked by CreateModel
// (model_factory.h) with field-level errors.

#include <memory>

#include "common/model_graph.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

// The graph's layers over X, each head's input an output of the model
// (graph_model.cc). `seed`: the job's (dropout masks).
std::unique_ptr<RecModel> MakeGraphModel(Device* device, ModelShape shape, ResolvedGraph graph,
                                         uint64_t seed);

}  // namespace herald::worker
