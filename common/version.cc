#include "common/version.h"

#include "absl/strings/str_cat.h"
#include "common/version_stamp.h"  // generated: HERALD_VERSION, HERALD_COMMIT

namespace herald {

const char* Version() { return HERALD_VERSION; }

const char* Commit() { return HERALD_COMMIT; }

std::string VersionLine(const std::string& program) {
  return absl::StrCat(program, " ", Version(), " (commit ", Commit(), ", wire version ",
                      kWireVersion, ")");
}

}  // namespace herald
