#include "scheduler/data/schema_file.h"

#include "absl/strings/match.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"
#include "scheduler/data/data_schema_spec.h"

namespace herald::scheduler {
namespace {

using data::testing::TempDir;
using data::testing::WriteFile;

constexpr char kSchema[] = R"pb(
  columns { name: "click" role: COLUMN_LABEL }
  columns { name: "price" role: COLUMN_DENSE }
  columns { name: "user" role: COLUMN_SPARSE ids: IDS_STRING }
)pb";

proto::JobSpec CsvSpec(const std::string& schema_file) {
  proto::JobSpec spec;
  spec.mutable_data()->set_format(proto::DATA_FORMAT_CSV);
  spec.mutable_data()->set_schema_file(schema_file);
  proto::TableSpec* t = spec.add_tables();
  t->set_name("user");
  t->set_dim(4);
  return spec;
}

TEST(SchemaFile, ARelativePathIsReadFromTheBaseDirectoryAndGoesInline) {
  TempDir dir;
  WriteFile(dir.File("shop.schema"), kSchema);
  proto::JobSpec spec = CsvSpec("shop.schema");
  ASSERT_TRUE(InlineSchemaFile(&spec, dir.path()).ok());
  EXPECT_TRUE(spec.data().schema_file().empty());
  ASSERT_EQ(spec.data().schema().columns_size(), 3);
  EXPECT_EQ(spec.data().schema().columns(2).ids(), proto::IDS_STRING);
  // A spec without a file is left as it is.
  proto::JobSpec again = spec;
  ASSERT_TRUE(InlineSchemaFile(&again, "").ok());
  EXPECT_EQ(again.SerializeAsString(), spec.SerializeAsString());
}

TEST(SchemaFile, TheSchedulerReadsAnAbsolutePathAtSubmit) {
  TempDir dir;
  WriteFile(dir.File("shop.schema"), kSchema);
  proto::JobSpec spec = CsvSpec(dir.File("shop.schema"));
  ASSERT_TRUE(ResolveDataSchema(&spec).ok());
  EXPECT_EQ(spec.num_dense(), 1u);
  EXPECT_EQ(spec.data().schema().columns_size(), 3);
  EXPECT_TRUE(spec.data().schema_file().empty());
}

TEST(SchemaFile, ErrorsNameTheFieldAndThePath) {
  TempDir dir;
  WriteFile(dir.File("broken.schema"), "columns { name: \"a\" }\ncolumns { nme: \"b\" }\n");
  struct Case {
    proto::JobSpec spec;
    std::string base, error;
  };
  proto::JobSpec both = CsvSpec("x.schema");
  both.mutable_data()->mutable_schema()->add_columns()->set_name("a");
  const Case cases[] = {
      {both, dir.path(), "data.schema_file 'x.schema': the spec has data.schema too"},
      {CsvSpec("x.schema"), "", "data.schema_file 'x.schema': a relative path"},
      {CsvSpec("missing.schema"), dir.path(), "cannot read " + dir.File("missing.schema")},
      {CsvSpec("broken.schema"), dir.path(),
       "not a DataSchemaSpec in text format: " + dir.File("broken.schema") + ":line 2:"},
  };
  for (const Case& c : cases) {
    proto::JobSpec spec = c.spec;
    absl::Status s = InlineSchemaFile(&spec, c.base);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.error;
    EXPECT_TRUE(absl::StrContains(s.message(), c.error)) << s;
  }
}

}  // namespace
}  // namespace herald::scheduler
