// deploy/grafana/herald.json queries only metrics the scheduler exports, with
// labels they carry: every herald_* name in a panel's expression or a
// template query is a family RenderMetrics writes, and every {{label}} in a
// legend is a label of that panel's first metric.

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "scheduler/http/metrics_text.h"

namespace herald::scheduler {
namespace {

std::string ReadDashboard() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string path = std::string(srcdir ? srcdir : ".") + "/" +
                           (workspace ? workspace : "herald") + "/deploy/grafana/herald.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Metrics for one running job with every family populated.
std::string RenderedMetrics() {
  JobManager::Snapshot snapshot;
  proto::JobStatus job;
  job.set_job_id("job-1");
  job.set_name("ctr");
  job.set_state(proto::JOB_RUNNING);
  job.mutable_progress()->set_iteration(3);
  snapshot.jobs.push_back(job);
  snapshot.running_job = "job-1";
  snapshot.queue_depths = {1, 2};
  proto::PsStatsResponse shard;
  shard.add_tables()->set_rows(1);
  shard.mutable_disk_tier()->set_memory_budget_bytes(1 << 20);  // the disk tier's families
  snapshot.ps_stats = {shard};
  proto::NodeStatus node;
  node.set_node_id("ps-0-1");
  node.set_role(proto::NODE_ROLE_PS);
  node.set_alive(true);
  return RenderMetrics(snapshot, {node});
}

// Every string value under `key` anywhere in `value`.
void Collect(const google::protobuf::Value& value, const std::string& key,
             std::vector<const google::protobuf::Struct*>* parents) {
  if (value.has_struct_value()) {
    const auto& fields = value.struct_value().fields();
    if (fields.count(key)) parents->push_back(&value.struct_value());
    for (const auto& [name, child] : fields) Collect(child, key, parents);
  } else if (value.has_list_value()) {
    for (const auto& child : value.list_value().values()) Collect(child, key, parents);
  }
}

TEST(GrafanaDashboard, QueriesOnlyExportedMetricsAndLabels) {
  const std::string json = ReadDashboard();
  ASSERT_FALSE(json.empty()) << "deploy/grafana/herald.json not found";
  google::protobuf::Value dashboard;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &dashboard).ok());
  const std::string metrics = RenderedMetrics();
  const std::regex name_re("herald_[a-z0-9_]+");
  const std::regex label_re("\\{\\{([a-z_]+)\\}\\}");
  std::vector<const google::protobuf::Struct*> targets, templates;
  Collect(dashboard, "expr", &targets);
  Collect(dashboard, "query", &templates);
  ASSERT_GE(targets.size(), 15u);
  std::set<std::string> used;
  auto check_names = [&](const std::string& text) {
    std::vector<std::string> names;
    for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) {
      names.push_back(it->str());
      used.insert(it->str());
      EXPECT_NE(metrics.find("# TYPE " + it->str() + " "), std::string::npos)
          << it->str() << " in \"" << text << "\" is not exported";
    }
    return names;
  };
  for (const google::protobuf::Struct* t : targets) {
    const std::string expr = t->fields().at("expr").string_value();
    const std::vector<std::string> names = check_names(expr);
    ASSERT_FALSE(names.empty()) << expr;
    if (!t->fields().count("legendFormat")) continue;
    const std::string legend = t->fields().at("legendFormat").string_value();
    // A line of the first metric, e.g. herald_ps_rows{shard="0"} 1.
    const size_t line = metrics.find("\n" + names[0] + "{");
    ASSERT_NE(line, std::string::npos) << names[0] << " has no labelled line";
    const std::string sample = metrics.substr(line + 1, metrics.find('\n', line + 1) - line - 1);
    for (std::sregex_iterator it(legend.begin(), legend.end(), label_re), end; it != end; ++it) {
      EXPECT_NE(sample.find((*it)[1].str() + "=\""), std::string::npos)
          << "legend label " << (*it)[1] << " is not a label of " << sample;
    }
  }
  for (const google::protobuf::Struct* t : templates) {
    if (t->fields().at("query").has_string_value()) {
      check_names(t->fields().at("query").string_value());
    }
  }
  // The panels cover the families an operator watches.
  for (const char* family :
       {"herald_job_samples_per_second", "herald_job_loss", "herald_job_worker_phase_seconds_total",
        "herald_job_rows_moved_vanilla_estimate", "herald_node_up", "herald_ps_memory_bytes"}) {
    EXPECT_TRUE(used.count(family)) << family << " has no panel";
  }
}

}  // namespace
}  // namespace herald::scheduler
