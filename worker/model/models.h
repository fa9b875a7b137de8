#pragma once
// The model heads (one file each). Shapes are assumed valid here: the job
// spec is checked by CreateModel (model_factory.h) with field-level errors.
// `hidden` are the deep tower's hidden widths (job spec model.top_mlp); every
// model ends in a 1-unit output layer.

#include <memory>
#include <vector>

#include "common/model_graph.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

// logit = wide(X) + deep(X): a linear wide part and an MLP over all features.
std::unique_ptr<RecModel> MakeWideAndDeep(Device* device, ModelShape shape,
                                          const std::vector<int>& hidden);
// logit = first-order linear(X) + FM(bags) + deep(X). REQUIRES: equal dims.
std::unique_ptr<RecModel> MakeDeepFm(Device* device, ModelShape shape,
                                     const std::vector<int>& hidden);
// logit = linear([cross_L(X), deep(X)]) with `cross_layers` cross layers.
std::unique_ptr<RecModel> MakeDcn(Device* device, ModelShape shape, const std::vector<int>& hidden,
                                  int cross_layers);
// NeuMF: logit = linear([bag_0 ⊙ bag_1, deep(X)]): tables 0 and 1 are the
// user and item tables (GMF), every feature feeds the MLP.
// REQUIRES: ≥ 2 tables, tables 0 and 1 of equal dim.
std::unique_ptr<RecModel> MakeNcf(Device* device, ModelShape shape, const std::vector<int>& hidden);
// DLRM: z = bottom(dense) (width = table dim), dots = pairwise dots of
// [z, bag_0, …], logit = top([z, dots]). REQUIRES: equal dims, num_dense > 0,
// bottom.back() == dim.
std::unique_ptr<RecModel> MakeDlrm(Device* device, ModelShape shape, const std::vector<int>& bottom,
                                   const std::vector<int>& hidden);
// A model of the user's own (model.graph), resolved by ResolveModelGraph:
// the graph's layers over X, its head's input the logit (graph_model.cc).
std::unique_ptr<RecModel> MakeGraphModel(Device* device, ModelShape shape, ResolvedGraph graph);

}  // namespace herald::worker
