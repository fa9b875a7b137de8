// The scheduler's status page in a real browser: a job trains on a local
// cluster (scheduler with --http_listen), then headless Chromium signs in
// with the cluster token, lets the page poll /api/status and draw, and
// dumps the DOM: the page shows that job, every chart holds one point per
// iteration of its history (the held-out chart one per evaluation) and the
// last evaluation's AUC, and each worker has its phase chart. A
// screenshot is saved as a test output (status_page.png). Where Chromium
// cannot start, the test prints "SKIPPED (no browser): reason".

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

constexpr uint64_t kIterations = 8;

// Headless Chromium with the flags a closed network needs; returns its exit
// code and output (the DOM with --dump-dom), -1 if it did not run.
testing::CommandResult Chromium(const std::string& dir, std::vector<std::string> args) {
  static int n = 0;
  const std::string profile = absl::StrCat(dir, "/chromium-profile-", n++);
  std::vector<std::string> flags = {"--headless",
                                    "--no-sandbox",
                                    "--disable-gpu",
                                    "--disable-quic",
                                    "--no-first-run",
                                    "--disable-background-networking",
                                    "--disable-component-update",
                                    "--disable-sync",
                                    "--disable-dev-shm-usage",
                                    "--user-data-dir=" + profile,
                                    "--virtual-time-budget=8000"};
  flags.insert(flags.end(), args.begin(), args.end());
  auto child = testing::ChildProcess::Start("/usr/bin/chromium", flags, profile + ".log");
  if (!child.ok()) return {-1, std::string(child.status().message())};
  auto code = (*child)->WaitForExit(90000);
  return {code.ok() ? *code : -1, (*child)->LogTail(4 << 20)};
}

// The value of `attribute` on the element whose id is `id` in `dom`, or "".
std::string Attribute(const std::string& dom, const std::string& id, const std::string& attribute) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t open = dom.rfind('<', at), close = dom.find('>', at);
  const std::string tag = dom.substr(open, close - open);
  const size_t a = tag.find(attribute + "=\"");
  if (a == std::string::npos) return "";
  const size_t begin = a + attribute.size() + 2;
  return tag.substr(begin, tag.find('"', begin) - begin);
}

TEST(StatusPage, ChromiumShowsTheJobsChartsWithItsDataPoints) {
  std::ifstream chromium("/usr/bin/chromium");
  if (!chromium) GTEST_SKIP() << "SKIPPED (no browser): /usr/bin/chromium is not installed";
  testing::ClusterFlags flags;
  flags.scheduler = {"--http_listen=127.0.0.1:0",
                     "--http_port_file=" + std::string(std::getenv("TEST_TMPDIR")) + "/http.port"};
  auto cluster = testing::LocalCluster::Start("status_page", 1, 2, nullptr, {}, flags);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  proto::JobSpec spec = testing::SmallWideAndDeepJob("page", proto::POLICY_HERALD, kIterations);
  spec.mutable_eval()->set_every_iterations(4);  // after iterations 3 and 7 (the end)
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = (*cluster)->Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << (*cluster)->Logs();

  std::ifstream port_file(std::string(std::getenv("TEST_TMPDIR")) + "/http.port");
  int port = 0;
  port_file >> port;
  ASSERT_GT(port, 0);
  // Signing in sets the token cookie and redirects to the page.
  const std::string url =
      absl::StrCat("http://127.0.0.1:", port, "/login?token=", testing::LocalCluster::kToken);
  const testing::CommandResult dom = Chromium((*cluster)->dir(), {"--dump-dom", url});
  if (dom.code != 0 || dom.output.find("<html") == std::string::npos) {
    GTEST_SKIP() << "SKIPPED (no browser): chromium exited " << dom.code << ": "
                 << dom.output.substr(0, 2000);
  }
  const std::string& page = dom.output;
  EXPECT_NE(page.find("data-job=\"" + *job + "\""), std::string::npos) << page.substr(0, 4000);
  EXPECT_NE(page.find("worker-"), std::string::npos) << "the nodes table lists the workers";
  const size_t updated = page.find("id=\"updated\"");
  ASSERT_NE(updated, std::string::npos);
  const std::string status_line = page.substr(updated, page.find("</span>", updated) - updated);
  EXPECT_NE(status_line.find("updated "), std::string::npos) << status_line;
  EXPECT_EQ(status_line.find("charts unavailable"), std::string::npos) << status_line;
  const std::string points = std::to_string(kIterations);
  for (const char* chart : {"chart-loss", "chart-speed", "chart-rows", "chart-vanilla", "chart-hit",
                            "chart-phases-0", "chart-phases-1"}) {
    EXPECT_EQ(Attribute(page, chart, "data-points"), points) << chart;
  }
  EXPECT_EQ(Attribute(page, "chart-eval", "data-points"), "2");
  // Each worker's time per step, named by what it waited for.
  EXPECT_EQ(Attribute(page, "chart-phases-1", "data-series"),
            "waiting for the scheduler|waiting for the PS (fetch)|device|all-reduce|"
            "push (waiting for the PS)|write-back (waiting for the PS)|decoding the step|"
            "checking and staging the step|commit (waiting for the PS)|reporting the step|"
            "device time (events)");
  const size_t eval = page.find("id=\"eval\"");
  ASSERT_NE(eval, std::string::npos);
  EXPECT_NE(
      page.substr(eval, 300).find(absl::StrFormat("held-out AUC %.4f", done.progress().eval_auc())),
      std::string::npos)
      << page.substr(eval, 300);
  // Chart.js drew them: it sizes the canvases it owns.
  EXPECT_NE(Attribute(page, "chart-loss", "style").find("height"), std::string::npos)
      << page.substr(page.find("chart-loss") - 200, 400);

  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string shot = absl::StrCat(outputs ? outputs : (*cluster)->dir(), "/status_page.png");
  const testing::CommandResult screenshot =
      Chromium((*cluster)->dir(),
               {"--hide-scrollbars", "--window-size=1280,1500", "--screenshot=" + shot, url});
  EXPECT_EQ(screenshot.code, 0) << screenshot.output.substr(0, 2000);
  std::ifstream png(shot, std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG") << shot;
  std::printf("status page screenshot: %s\n", shot.c_str());
}

}  // namespace
}  // namespace herald
