#include "cli/predictions_file.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/model_graph.h"
#include "common/trained_label.h"
#include "worker/model/model_factory.h"

namespace herald::cli {
namespace {

// Keys [begin, end) of one table, with weights where it has them.
void AppendKeys(const data::KeyBatch::Table& table, uint32_t begin, uint32_t end,
                std::string* line) {
  for (uint32_t k = begin; k < end; ++k) {
    if (k > begin) line->push_back(' ');
    absl::StrAppend(line, table.keys[k]);
    if (!table.weights.empty()) absl::StrAppendFormat(line, ":%.9g", table.weights[k]);
  }
}

}  // namespace

absl::Status PredictionsFile::Open(const std::string& path, const proto::JobSpec& spec,
                                   PredictionsFile* out) {
  out->path_ = path;
  out->num_dense_ = spec.num_dense();
  for (const TrainedLabel& label : TrainedLabelsOf(spec)) {
    out->label_columns_.push_back(label.column);
  }
  for (const worker::TableShape& f : worker::ShapeFromSpec(spec).tables) {
    out->features_.push_back({f.table, f.index_in_table});
  }
  out->file_ = std::fopen(path.c_str(), "w");
  if (out->file_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("--predictions ", path, ": cannot create: ", std::strerror(errno)));
  }
  std::string line = "label\tprediction\tdense";
  for (const ModelFeature& f : ModelFeaturesOf(spec)) absl::StrAppend(&line, "\t", f.name);
  line.push_back('\n');
  std::fputs(line.c_str(), out->file_);
  return absl::OkStatus();
}

PredictionsFile::~PredictionsFile() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status PredictionsFile::Add(const data::KeyBatch& batch,
                                  const std::vector<float>& predictions) {
  std::string line;
  for (uint32_t s = 0; s < batch.num_samples; ++s) {
    line.clear();
    const size_t heads = label_columns_.size();
    for (size_t h = 0; h < heads; ++h) {
      absl::StrAppendFormat(&line, "%s%.9g", h > 0 ? "," : "",
                            batch.labels[size_t{s} * batch.num_labels + label_columns_[h]]);
    }
    line.push_back('\t');
    for (size_t h = 0; h < heads; ++h) {
      absl::StrAppendFormat(&line, "%s%.9g", h > 0 ? "," : "", predictions[s * heads + h]);
    }
    line.push_back('\t');
    for (uint32_t d = 0; d < num_dense_; ++d) {
      if (d > 0) line.push_back(',');
      absl::StrAppendFormat(&line, "%.9g", batch.dense[static_cast<size_t>(s) * num_dense_ + d]);
    }
    for (const Feature& f : features_) {
      line.push_back('\t');
      const data::KeyBatch::Table& table = batch.tables[f.table];
      uint32_t begin = table.offsets[s], end = table.offsets[s + 1];
      if (table.features > 1) {  // the sample's keys are its features' back to back
        const uint32_t* lengths =
            table.feature_lengths.data() + static_cast<size_t>(s) * table.features;
        for (uint32_t j = 0; j < f.index_in_table; ++j) begin += lengths[j];
        end = begin + lengths[f.index_in_table];
      }
      AppendKeys(table, begin, end, &line);
    }
    line.push_back('\n');
    if (std::fputs(line.c_str(), file_) == EOF) {
      return absl::DataLossError(
          absl::StrCat("--predictions ", path_, ": write failed: ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status PredictionsFile::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  const bool failed = std::ferror(file_) != 0;
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (failed || closed != 0) {
    return absl::DataLossError(
        absl::StrCat("--predictions ", path_, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace herald::cli
