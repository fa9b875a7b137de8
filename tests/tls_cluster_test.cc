// A cluster that serves TLS everywhere: herald_scheduler, two herald_ps and
// two herald_worker started with --tls_cert/--tls_key/--tls_ca (certificates
// from a throw-away test CA). Every channel between them is TLS — the
// workers' and the PS shards' to the scheduler, the workers' and the
// scheduler's to the PS shards — so the job below only succeeds, and exports,
// if each of them verified its peer. heraldctl must be given the CA, and is
// refused without it, with a CA that did not sign the servers, and with a
// server name the certificate does not carry.

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/job.pb.h"
#include "ps_server/client/sharded_ps_client.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/process.h"
#include "tests/harness/small_job.h"
#include "tests/harness/test_certs.h"

namespace herald {
namespace {

class TlsCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_dir_ = testing::MakeTestDir("certs");
    auto certs = testing::MakeTestCerts(certs_dir_);
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = *certs;
    auto cluster = testing::LocalCluster::Start("tls", 2, 2, &certs_);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // heraldctl `args` against the cluster, with its token and `tls_args`.
  testing::CommandResult Ctl(std::vector<std::string> args,
                             const std::vector<std::string>& tls_args) {
    args.push_back("--scheduler=" + cluster_->address());
    args.push_back("--token-file=" + cluster_->token_file());
    args.insert(args.end(), tls_args.begin(), tls_args.end());
    return testing::RunHeraldctl(cluster_->dir(), args);
  }

  std::string certs_dir_;
  testing::TestCerts certs_;
  std::unique_ptr<testing::LocalCluster> cluster_;
};

TEST_F(TlsCluster, AJobTrainsAndExportsOverTlsEverywhere) {
  absl::StatusOr<std::string> job =
      cluster_->Submit(testing::SmallWideAndDeepJob("tls", proto::POLICY_HERALD, 8));
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = cluster_->Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << cluster_->Logs();
  EXPECT_EQ(done.progress().iteration(), 8u);
  EXPECT_GT(done.progress().rows_fetched(), 0u);

  // The PS shards serve TLS only: a plaintext client is refused, one that
  // verifies with the CA reads the job's counters.
  ps::PsClientOptions plaintext, verified;
  plaintext.control_timeout = absl::Seconds(5);
  verified.channel.tls_root_cert_path = certs_.ca_pem;
  auto refused = ps::MakeGrpcPsClient(cluster_->PsAddresses(), plaintext);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ((*refused)->Stats(*job).status().code(), absl::StatusCode::kUnavailable);
  auto client = ps::MakeGrpcPsClient(cluster_->PsAddresses(), verified);
  ASSERT_TRUE(client.ok());
  absl::StatusOr<std::vector<proto::PsStatsResponse>> stats = (*client)->Stats(*job);
  ASSERT_TRUE(stats.ok()) << stats.status();
  uint64_t fetched = 0;
  for (const proto::PsStatsResponse& shard : *stats) fetched += shard.rows_fetched();
  EXPECT_EQ(fetched, done.progress().rows_fetched());

  const std::string out = cluster_->dir() + "/model";
  testing::CommandResult exported =
      Ctl({"export", *job, "--out", out}, {"--tls-ca=" + certs_.ca_pem});
  ASSERT_EQ(exported.code, 0) << exported.output;
  testing::CommandResult status = Ctl({"status", *job, "--json"}, {"--tls-ca=" + certs_.ca_pem});
  ASSERT_EQ(status.code, 0) << status.output;
  EXPECT_NE(status.output.find("JOB_SUCCEEDED"), std::string::npos) << status.output;
}

TEST_F(TlsCluster, HeraldctlMustVerifyTheScheduler) {
  const std::vector<std::string> nodes = {"nodes", "--json"};
  testing::CommandResult ok = Ctl(nodes, {"--tls-ca=" + certs_.ca_pem});
  ASSERT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("NODE_ROLE_PS"), std::string::npos) << ok.output;

  // The certificate names DNS:localhost too: an explicit expected name works.
  testing::CommandResult named =
      Ctl(nodes, {"--tls-ca=" + certs_.ca_pem, "--tls-server-name=localhost"});
  EXPECT_EQ(named.code, 0) << named.output;

  // Plaintext against a TLS-only server, an unrelated CA, a name the
  // certificate lacks: each refused (exit 1), never a plaintext fallback.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{}, std::vector<std::string>{"--tls-ca=" + certs_.other_ca_pem},
        std::vector<std::string>{"--tls-ca=" + certs_.ca_pem,
                                 "--tls-server-name=herald.invalid"}}) {
    testing::CommandResult refused = Ctl(nodes, bad);
    EXPECT_EQ(refused.code, 1) << refused.output;
    EXPECT_NE(refused.output.find("UNAVAILABLE"), std::string::npos) << refused.output;
  }
}

TEST_F(TlsCluster, BadTlsFlagsAreUsageErrors) {
  // A missing CA file or a server name without a CA: exit 2 naming the flag.
  testing::CommandResult missing = Ctl({"nodes"}, {"--tls-ca=" + certs_dir_ + "/absent.pem"});
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_NE(missing.output.find("--tls_ca: cannot read"), std::string::npos) << missing.output;
  testing::CommandResult lone = Ctl({"nodes"}, {"--tls-server-name=localhost"});
  EXPECT_EQ(lone.code, 2) << lone.output;
  EXPECT_NE(lone.output.find("--tls_server_name needs --tls_ca"), std::string::npos) << lone.output;

  // A server given a certificate without its key refuses to start.
  const std::string dir = testing::MakeTestDir("bad_server");
  for (const std::string binary :
       {"scheduler/herald_scheduler", "ps_server/herald_ps", "worker/herald_worker"}) {
    SCOPED_TRACE(binary);
    std::vector<std::string> args = {"--tls_cert=" + certs_.server_pem};
    if (binary != "scheduler/herald_scheduler")
      args.push_back("--scheduler=" + cluster_->address());
    auto p = testing::ChildProcess::Start(testing::RunfilePath(binary), args,
                                          dir + "/" + binary.substr(binary.find('/') + 1) + ".log");
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<int> code = (*p)->WaitForExit(30000);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_EQ(*code, 2);
    EXPECT_NE((*p)->LogTail().find("--tls_cert and --tls_key must be given together"),
              std::string::npos)
        << (*p)->LogTail();
  }
}

}  // namespace
}  // namespace herald
