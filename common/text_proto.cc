#include "common/text_proto.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace herald {

absl::Status ParseTextProto(absl::string_view text, google::protobuf::Message* out) {
  struct Collector : google::protobuf::io::ErrorCollector {
    std::string first;
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
    }
  } errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), out)) {
    return absl::InvalidArgumentError(errors.first.empty() ? "not valid text format"
                                                           : errors.first);
  }
  return absl::OkStatus();
}

}  // namespace herald
