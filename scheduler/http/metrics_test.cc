// The metrics endpoint: a real HTTP server on 127.0.0.1 port 0 rendering the
// job manager's state, fetched with an HTTP client.

#include <httplib.h>

#include <string>

#include "gtest/gtest.h"
#include "scheduler/http/metrics_text.h"
#include "scheduler/http/status_http.h"

namespace herald::scheduler {
namespace {

TEST(MetricsText, RendersJobsProgressQueuesPsAndNodes) {
  JobManager::Snapshot snapshot;
  proto::JobStatus job;
  job.set_job_id("job-1");
  job.set_name("w\"d");
  job.set_state(proto::JOB_RUNNING);
  job.mutable_progress()->set_iteration(7);
  job.mutable_progress()->set_rows_fetched(1234);
  job.mutable_progress()->set_rows_handed_off(56);
  job.mutable_progress()->set_rows_initialized(78);
  job.mutable_progress()->set_worker_compute_ms(2500);
  job.mutable_progress()->set_worker_device_ms(2000);
  job.mutable_progress()->set_scheduler_plan_ms(1500);
  job.mutable_progress()->set_scheduler_encode_ms(250);
  job.mutable_progress()->set_evals_done(2);
  job.mutable_progress()->set_eval_auc(0.75);
  proto::LabelMetrics* click = job.mutable_progress()->add_eval_labels();
  click->set_label("click");
  click->set_auc(0.75);
  click->set_logloss(0.5);
  proto::LabelMetrics* rating = job.mutable_progress()->add_eval_labels();
  rating->set_label("rating");
  rating->set_regression(true);
  rating->set_rmse(1.25);
  job.mutable_progress()->set_eval_ms(1500);
  snapshot.jobs.push_back(job);
  snapshot.running_job = "job-1";
  snapshot.queue_depths = {3, 0};
  proto::PsStatsResponse shard;
  shard.set_memory_bytes(4096);
  shard.add_tables()->set_rows(10);
  shard.add_tables()->set_rows(5);
  shard.set_early_requests(9);
  shard.set_early_served_ahead(7);
  snapshot.ps_stats = {shard};
  proto::NodeStatus node;
  node.set_node_id("worker-0-2");
  node.set_role(proto::NODE_ROLE_WORKER);
  node.set_alive(true);

  const std::string text = RenderMetrics(snapshot, {node});
  EXPECT_NE(text.find("herald_jobs{state=\"JOB_RUNNING\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("herald_jobs{state=\"JOB_FAILED\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("herald_job_iteration{job=\"job-1\",name=\"w\\\"d\"} 7\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_rows_fetched_total{job=\"job-1\",name=\"w\\\"d\"} 1234\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_rows_handed_off_total{job=\"job-1\",name=\"w\\\"d\"} 56\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_rows_initialized_total{job=\"job-1\",name=\"w\\\"d\"} 78\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_eval_auc{job=\"job-1\",name=\"w\\\"d\"} 0.75\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_eval_label_auc{job=\"job-1\",label=\"click\"} 0.75\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_eval_label_logloss{job=\"job-1\",label=\"click\"} 0.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_eval_label_rmse{job=\"job-1\",label=\"rating\"} 1.25\n"),
            std::string::npos);
  EXPECT_EQ(text.find("herald_job_eval_label_rmse{job=\"job-1\",label=\"click\"}"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_evals_total{job=\"job-1\",name=\"w\\\"d\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_job_eval_seconds_total{job=\"job-1\",name=\"w\\\"d\"} 1.5\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("herald_job_worker_phase_seconds_total{job=\"job-1\",phase=\"compute\"} 2.5\n"),
      std::string::npos);
  EXPECT_NE(text.find("herald_job_worker_device_seconds_total{job=\"job-1\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("herald_job_scheduler_phase_seconds_total{job=\"job-1\",phase=\"plan\"} 1.5\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("herald_job_scheduler_phase_seconds_total{job=\"job-1\",phase=\"encode\"} 0.25\n"),
      std::string::npos);
  EXPECT_NE(text.find("herald_step_queue_depth{job=\"job-1\",worker=\"0\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_ps_memory_bytes{shard=\"0\"} 4096\n"), std::string::npos);
  EXPECT_NE(text.find("herald_ps_rows{shard=\"0\"} 15\n"), std::string::npos);
  EXPECT_NE(text.find("herald_ps_early_fetches_total{shard=\"0\",served=\"ahead\"} 7\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_ps_early_fetches_total{shard=\"0\",served=\"after_commit\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("herald_node_up{node=\"worker-0-2\",role=\"worker\",rank=\"0\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE herald_job_rows_fetched_total counter\n"), std::string::npos);
}

TEST(MetricsHttp, ServesMetricsOnAnEphemeralPortAndRefusesBadAddresses) {
  NodeRegistry registry(absl::Hours(1));
  KvRendezvous kv;
  JobManager jobs(&registry, &kv, JobManagerOptions{});
  StatusHttpOptions o;
  o.listen = "127.0.0.1:0";
  o.page = false;
  o.flag = "--metrics_listen";
  auto server = StatusHttpServer::Start(o, &jobs, &registry);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("herald_jobs{state=\"JOB_QUEUED\"} 0"), std::string::npos) << res->body;
  EXPECT_EQ(client.Get("/other")->status, 404);
  EXPECT_EQ(client.Get("/")->status, 404);  // no page on the metrics port
  EXPECT_EQ(client.Get("/api/status")->status, 404);

  o.listen = "no-port";
  auto bad = StatusHttpServer::Start(o, &jobs, &registry);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--metrics_listen"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace herald::scheduler
