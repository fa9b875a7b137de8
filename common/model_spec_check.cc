#include "common/model_spec_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/model_graph.h"

namespace herald {
namespace {

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::Status CheckWidths(const google::protobuf::RepeatedField<uint32_t>& widths,
                         const std::string& field) {
  for (int i = 0; i < widths.size(); ++i) {
    if (widths[i] == 0) return Invalid(absl::StrCat(field, "[", i, "]"), "must be > 0");
    if (widths[i] > 65536) return Invalid(absl::StrCat(field, "[", i, "]"), "must be <= 65536");
  }
  return absl::OkStatus();
}

absl::Status CheckEqualDims(const proto::JobSpec& spec, const char* model) {
  for (int t = 1; t < spec.tables_size(); ++t) {
    if (spec.tables(t).dim() != spec.tables(0).dim()) {
      return Invalid(
          absl::StrCat("tables[", t, "].dim"),
          absl::StrCat(spec.tables(t).dim(), " differs from tables[0].dim ", spec.tables(0).dim(),
                       "; ", model, " needs one embedding dim for every table"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateModelSpec(const proto::JobSpec& spec) {
  const proto::ModelSpec& model = spec.model();
  if (spec.tables_size() == 0) return Invalid("tables", "a model needs at least one table");
  for (int t = 0; t < spec.tables_size(); ++t) {
    const uint32_t dim = spec.tables(t).dim();
    if (dim == 0 || dim > 4096) {
      return Invalid(absl::StrCat("tables[", t, "].dim"), "must be in [1, 4096]");
    }
  }
  if (spec.num_dense() > 1024) return Invalid("num_dense", "must be <= 1024");
  if (model.has_graph()) {
    if (model.kind() != proto::MODEL_KIND_UNSPECIFIED) {
      return Invalid("model.kind", "set beside model.graph: a graph model has no kind");
    }
    if (!model.bottom_mlp().empty() || !model.top_mlp().empty() || model.cross_layers() != 0) {
      return Invalid("model",
                     "bottom_mlp, top_mlp and cross_layers belong to built-in kinds; a "
                     "graph model writes its layers in model.graph");
    }
    return ResolveModelGraph(spec).status();
  }
  if (auto s = CheckWidths(model.bottom_mlp(), "model.bottom_mlp"); !s.ok()) return s;
  if (auto s = CheckWidths(model.top_mlp(), "model.top_mlp"); !s.ok()) return s;
  const bool needs_hidden = model.kind() == proto::MODEL_DCN || model.kind() == proto::MODEL_NCF;
  if (needs_hidden && model.top_mlp().empty()) {
    return Invalid("model.top_mlp", "the deep tower needs at least one hidden layer");
  }
  switch (model.kind()) {
    case proto::MODEL_WIDE_AND_DEEP:
      break;
    case proto::MODEL_DEEPFM:
      if (auto s = CheckEqualDims(spec, "DeepFM"); !s.ok()) return s;
      break;
    case proto::MODEL_DCN:
      if (model.cross_layers() == 0 || model.cross_layers() > 64) {
        return Invalid("model.cross_layers", "must be in [1, 64] for DCN");
      }
      break;
    case proto::MODEL_NCF:
      if (spec.tables_size() < 2) {
        return Invalid("tables",
                       "NCF needs a user table (tables[0]) and an item table (tables[1])");
      }
      if (ModelFeaturesOf(spec).size() < 2) {
        return Invalid("data.schema",
                       "NCF needs two sparse features (the user's and the item's, in that order)");
      }
      if (spec.tables(1).dim() != spec.tables(0).dim()) {
        return Invalid("tables[1].dim", "must equal tables[0].dim for NCF's GMF product");
      }
      break;
    case proto::MODEL_DLRM: {
      if (auto s = CheckEqualDims(spec, "DLRM"); !s.ok()) return s;
      if (spec.num_dense() == 0)
        return Invalid("num_dense", "DLRM's bottom MLP needs dense features");
      if (model.bottom_mlp().empty()) return Invalid("model.bottom_mlp", "DLRM needs a bottom MLP");
      const uint32_t last = model.bottom_mlp(model.bottom_mlp_size() - 1);
      if (last != spec.tables(0).dim()) {
        return Invalid("model.bottom_mlp",
                       absl::StrCat("last width ", last, " must equal the embedding dim ",
                                    spec.tables(0).dim(), " (DLRM)"));
      }
      break;
    }
    default:
      return Invalid("model.kind", "unset or unknown");
  }
  // The kind's graph (builtin_model_graph.h) over the data's features.
  return ResolveModelGraph(spec).status();
}

}  // namespace herald
