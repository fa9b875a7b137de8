#include "tests/harness/test_certs.h"

#include <unistd.h>

#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/process.h"

namespace herald::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";

absl::Status Openssl(const std::string& dir, const std::vector<std::string>& args) {
  static int calls = 0;
  const std::string log = absl::StrCat(dir, "/openssl.", ++calls, ".log");
  absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(kOpenssl, args, log);
  if (!p.ok()) return p.status();
  absl::StatusOr<int> code = (*p)->WaitForExit(60000);
  if (!code.ok()) return code.status();
  if (*code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("openssl ", args[0], " exited ", *code, ":\n", (*p)->LogTail()));
  }
  return absl::OkStatus();
}

// A self-signed CA certificate and key.
absl::Status MakeCa(const std::string& dir, const std::string& name) {
  return Openssl(
      dir, {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", dir + "/" + name + ".key", "-out", dir + "/" + name + ".pem", "-days", "2",
            "-subj", "/CN=" + name, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
            "keyUsage=critical,keyCertSign,cRLSign"});
}

}  // namespace

absl::StatusOr<TestCerts> MakeTestCerts(const std::string& dir) {
  if (access(kOpenssl, X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(kOpenssl, " not found: run deploy/install_deps.sh (Debian package openssl)"));
  }
  TestCerts c;
  c.ca_pem = dir + "/herald-test-ca.pem";
  c.other_ca_pem = dir + "/other-ca.pem";
  c.server_pem = dir + "/server.pem";
  c.server_key = dir + "/server.key";
  if (absl::Status s = MakeCa(dir, "herald-test-ca"); !s.ok()) return s;
  if (absl::Status s = MakeCa(dir, "other-ca"); !s.ok()) return s;
  const std::string csr = dir + "/server.csr", ext = dir + "/server.ext";
  std::ofstream(ext) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                     << "extendedKeyUsage=serverAuth\n";
  if (absl::Status s = Openssl(
          dir, {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", c.server_key, "-out", csr, "-subj", "/CN=herald-node"});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Openssl(
          dir, {"x509", "-req", "-in", csr, "-CA", c.ca_pem, "-CAkey", dir + "/herald-test-ca.key",
                "-CAcreateserial", "-out", c.server_pem, "-days", "2", "-extfile", ext});
      !s.ok()) {
    return s;
  }
  return c;
}

}  // namespace herald::testing
