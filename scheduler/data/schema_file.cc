#include "scheduler/data/schema_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/text_proto.h"

namespace herald::scheduler {

absl::Status InlineSchemaFile(proto::JobSpec* spec, const std::string& base_dir) {
  proto::DataSpec* data = spec->mutable_data();
  if (data->schema_file().empty()) return absl::OkStatus();
  const std::string named = data->schema_file();
  auto bad = [&](auto... why) {
    return absl::InvalidArgumentError(absl::StrCat("data.schema_file '", named, "': ", why...));
  };
  if (data->has_schema()) return bad("the spec has data.schema too; give one of them");
  std::filesystem::path path(named);
  if (path.is_relative()) {
    if (base_dir.empty()) {
      return bad(
          "a relative path, which the scheduler cannot place (heraldctl reads it from the "
          "spec file's directory; other clients give an absolute path)");
    }
    path = std::filesystem::path(base_dir) / path;
  }
  std::ifstream in(path);
  if (!in) return bad("cannot read ", path.string());
  std::stringstream text;
  text << in.rdbuf();
  proto::DataSchemaSpec schema;
  if (absl::Status s = ParseTextProto(text.str(), &schema); !s.ok()) {
    return bad("not a DataSchemaSpec in text format: ", path.string(), ":", s.message());
  }
  *data->mutable_schema() = std::move(schema);
  data->clear_schema_file();
  return absl::OkStatus();
}

}  // namespace herald::scheduler
