#pragma once
// A column schema as bytes: what the binary format version 2 stores in its
// header, so that a file carries how its samples were read and how their
// dense values are transformed. All integers little-endian.
//
//   columns := u32 count  u8 separator  u8 header  u8 ignore_other_columns  u8 0
//              column[count]
//   column  := u8 role  u8 label  u8 transform  u8 ids  f32 scale  f32 shift
//              f32 missing_value  u8 multi_hot_separator  u8 0
//              u16 name_bytes  name  u16 table_bytes  table

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/column_schema.h"

namespace herald::data {

// REQUIRES: ValidateColumns(schema) is OK (names of at most 65535 bytes).
std::string EncodeColumns(const ColumnsSchema& schema);

// Whether `a` and `b` have the same columns (names, roles, transforms, id
// formats, tables), whatever their text's separator and header: what
// samples read with them depend on.
bool SameColumns(const ColumnsSchema& a, const ColumnsSchema& b);

// Errors: InvalidArgument naming what does not decode (a count or length
// past the end, an unknown enum value, bytes left over) or
// ValidateColumns's error.
absl::StatusOr<ColumnsSchema> DecodeColumns(absl::string_view bytes);

}  // namespace herald::data
