#pragma once
// Throw-away certificates for TLS tests, made with the openssl command-line
// tool (installed by deploy/install_deps.sh): a test CA, a server certificate
// it signs for IP 127.0.0.1 and DNS "localhost", and an unrelated second CA
// that must not verify the server. P-256 keys, valid for two days.

#include <string>

#include "absl/status/statusor.h"

namespace herald::testing {

struct TestCerts {
  std::string ca_pem;        // root the servers' certificate chains to
  std::string server_pem;    // server certificate (SAN IP:127.0.0.1, DNS:localhost)
  std::string server_key;    // its private key
  std::string other_ca_pem;  // a CA that did not sign the server certificate
};

// Writes the files into `dir`. Errors: FailedPrecondition when openssl is
// missing or fails (with its output).
absl::StatusOr<TestCerts> MakeTestCerts(const std::string& dir);

}  // namespace herald::testing
