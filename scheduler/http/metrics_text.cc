#include "scheduler/http/metrics_text.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace herald::scheduler {
namespace {

// One metric family: HELP and TYPE once, then its samples.
class Family {
 public:
  Family(std::string* out, const std::string& name, const std::string& type,
         const std::string& help)
      : out_(out), name_(name) {
    absl::StrAppend(out_, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
  }
  void Add(const std::string& labels, double value) {
    absl::StrAppendFormat(out_, "%s%s %.17g\n", name_, labels.empty() ? "" : "{" + labels + "}",
                          value);
  }

 private:
  std::string* out_;
  std::string name_;
};

std::string Escape(const std::string& v) {
  return absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

std::string Label(const std::string& key, const std::string& value) {
  return absl::StrCat(key, "=\"", Escape(value), "\"");
}

}  // namespace

std::string RenderMetrics(const JobManager::Snapshot& snapshot,
                          const std::vector<proto::NodeStatus>& nodes) {
  std::string out;
  {
    std::map<std::string, int> by_state;
    for (int s = proto::JOB_QUEUED; s <= proto::JOB_CANCELLED; ++s) {
      by_state[proto::JobState_Name(static_cast<proto::JobState>(s))] = 0;
    }
    for (const proto::JobStatus& j : snapshot.jobs) ++by_state[proto::JobState_Name(j.state())];
    Family f(&out, "herald_jobs", "gauge", "Jobs known to the scheduler, by state.");
    for (const auto& [state, n] : by_state) f.Add(Label("state", state), n);
  }

  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const proto::JobProgress&);
  };
  static const Gauge kGauges[] = {
      {"herald_job_iteration", "gauge", "Iterations completed.",
       [](const proto::JobProgress& p) { return double(p.iteration()); }},
      {"herald_job_iterations_total", "gauge", "Iterations the job runs (0: not known yet).",
       [](const proto::JobProgress& p) { return double(p.total_iterations()); }},
      {"herald_job_iterations_planned", "gauge", "Iterations planned and queued to workers.",
       [](const proto::JobProgress& p) { return double(p.iterations_planned()); }},
      {"herald_job_samples_per_second", "gauge", "Training samples per second since the start.",
       [](const proto::JobProgress& p) { return p.samples_per_second(); }},
      {"herald_job_loss", "gauge", "Mean loss of the last completed iteration.",
       [](const proto::JobProgress& p) { return p.loss(); }},
      {"herald_job_cache_hit_rate", "gauge", "Share of row uses served by worker caches.",
       [](const proto::JobProgress& p) { return p.cache_hit_rate(); }},
      {"herald_job_eta_seconds", "gauge", "Estimated seconds to the job's end.",
       [](const proto::JobProgress& p) { return p.eta_seconds(); }},
      {"herald_job_rows_fetched_total", "counter", "Embedding rows fetched from the PS (planned).",
       [](const proto::JobProgress& p) { return double(p.rows_fetched()); }},
      {"herald_job_rows_pushed_total", "counter",
       "Shared-row gradients pushed to the PS (planned).",
       [](const proto::JobProgress& p) { return double(p.rows_pushed()); }},
      {"herald_job_rows_written_back_total", "counter", "Rows written back to the PS (planned).",
       [](const proto::JobProgress& p) { return double(p.rows_written_back()); }},
      {"herald_job_rows_handed_off_total", "counter",
       "Rows sent worker to worker instead of through the PS (planned).",
       [](const proto::JobProgress& p) { return double(p.rows_handed_off()); }},
      {"herald_job_rows_initialized_total", "counter",
       "Rows never trained, initialised by the workers instead of fetched (planned).",
       [](const proto::JobProgress& p) { return double(p.rows_initialized()); }},
      {"herald_job_keys_admitted", "gauge",
       "Keys that have rows under id admission or row expiry (tables[].admission, expiry).",
       [](const proto::JobProgress& p) { return double(p.keys_admitted()); }},
      {"herald_job_keys_waiting", "gauge", "Keys seen fewer times than id admission asks (no row).",
       [](const proto::JobProgress& p) { return double(p.keys_waiting()); }},
      {"herald_job_lookups_dropped_total", "counter",
       "Lookups of keys not yet admitted, dropped from their bags.",
       [](const proto::JobProgress& p) { return double(p.lookups_dropped()); }},
      {"herald_job_rows_expired_total", "counter",
       "Rows deleted by row expiry (tables[].expiry): on the PS, its disk tier and the caches.",
       [](const proto::JobProgress& p) { return double(p.rows_expired()); }},
      {"herald_job_rows_moved_vanilla_estimate", "gauge",
       "Rows a vanilla cache would have moved (estimate: 2 x row uses).",
       [](const proto::JobProgress& p) { return double(p.rows_moved_vanilla()); }},
      {"herald_job_ps_disk_rows_critical_total", "counter",
       "Rows the PS shards read from their disk tiers while a request waited.",
       [](const proto::JobProgress& p) { return double(p.ps_disk_rows_critical()); }},
      {"herald_job_ps_disk_rows_ahead_total", "counter",
       "Rows the PS shards read from their disk tiers ahead (the scheduler's look-ahead).",
       [](const proto::JobProgress& p) { return double(p.ps_disk_rows_ahead()); }},
      {"herald_job_malformed_lines_total", "counter", "Malformed input lines skipped.",
       [](const proto::JobProgress& p) { return double(p.malformed_lines()); }},
      {"herald_job_worker_bytes_moved_total", "counter", "Embedding bytes workers moved.",
       [](const proto::JobProgress& p) { return double(p.worker_bytes_moved()); }},
      {"herald_job_checkpoints_written_total", "counter", "Consistent checkpoints written.",
       [](const proto::JobProgress& p) { return double(p.checkpoints_written()); }},
      {"herald_job_checkpoint_failures_total", "counter",
       "Checkpoints the storage refused (full, read-only); training went on.",
       [](const proto::JobProgress& p) { return double(p.checkpoint_failures()); }},
      {"herald_job_checkpoint_seconds_total", "counter",
       "Training time spent waiting for periodic checkpoints.",
       [](const proto::JobProgress& p) { return p.checkpoint_ms() / 1000; }},
      {"herald_job_files_scored_total", "counter",
       "New files of a followed directory scored before they trained (eval.each_file).",
       [](const proto::JobProgress& p) { return double(p.files_scored()); }},
      {"herald_job_eval_auc", "gauge",
       "AUC of the newest evaluation, held-out or of new files (0.5 before one).",
       [](const proto::JobProgress& p) { return p.evals_done() ? p.eval_auc() : 0.5; }},
      {"herald_job_eval_logloss", "gauge", "Held-out log loss of the newest evaluation.",
       [](const proto::JobProgress& p) { return p.eval_logloss(); }},
      {"herald_job_eval_iteration", "gauge", "Iterations trained before the newest evaluation.",
       [](const proto::JobProgress& p) { return double(p.eval_iteration()); }},
      {"herald_job_evals_total", "counter", "Evaluations on the held-out samples run.",
       [](const proto::JobProgress& p) { return double(p.evals_done()); }},
      {"herald_job_eval_seconds_total", "counter", "Training time spent waiting for evaluations.",
       [](const proto::JobProgress& p) { return p.eval_ms() / 1000; }},
  };
  for (const Gauge& g : kGauges) {
    Family f(&out, g.name, g.type, g.help);
    for (const proto::JobStatus& j : snapshot.jobs) {
      f.Add(absl::StrCat(Label("job", j.job_id()), ",", Label("name", j.name())),
            g.get(j.progress()));
    }
  }
  {
    // Each judged label's figures of the newest evaluation (binary: AUC and
    // log loss; regression: RMSE), labelled by the data's label column.
    struct PerLabel {
      const char* name;
      const char* help;
      bool regression;
      double (proto::LabelMetrics::*get)() const;
    };
    static const PerLabel kPerLabel[] = {
        {"herald_job_eval_label_auc", "Held-out AUC of a binary label in the newest evaluation.",
         false, &proto::LabelMetrics::auc},
        {"herald_job_eval_label_logloss",
         "Held-out log loss of a binary label in the newest evaluation.", false,
         &proto::LabelMetrics::logloss},
        {"herald_job_eval_label_rmse",
         "Held-out RMSE of a regression label in the newest evaluation.", true,
         &proto::LabelMetrics::rmse},
    };
    for (const PerLabel& g : kPerLabel) {
      Family f(&out, g.name, "gauge", g.help);
      for (const proto::JobStatus& j : snapshot.jobs) {
        for (const proto::LabelMetrics& m : j.progress().eval_labels()) {
          if (m.regression() != g.regression) continue;
          f.Add(absl::StrCat(Label("job", j.job_id()), ",", Label("label", m.label())),
                (m.*g.get)());
        }
      }
    }
  }
  {
    Family f(&out, "herald_job_worker_phase_seconds_total", "counter",
             "Worker time per iteration phase, summed over workers.");
    for (const proto::JobStatus& j : snapshot.jobs) {
      const proto::JobProgress& p = j.progress();
      const std::pair<const char*, double> phases[] = {
          {"fetch", p.worker_fetch_ms()},         {"compute", p.worker_compute_ms()},
          {"allreduce", p.worker_allreduce_ms()}, {"push", p.worker_push_ms()},
          {"writeback", p.worker_writeback_ms()}, {"step_wait", p.worker_step_wait_ms()},
          {"decode", p.worker_decode_ms()},       {"stage", p.worker_stage_ms()},
          {"commit", p.worker_commit_ms()},       {"report", p.worker_report_ms()}};
      for (const auto& [phase, ms] : phases) {
        f.Add(absl::StrCat(Label("job", j.job_id()), ",", Label("phase", phase)), ms / 1000);
      }
    }
  }
  {
    Family f(&out, "herald_job_worker_device_seconds_total", "counter",
             "Device time of the workers' training (device events), summed over workers; "
             "over the phases' sum, how busy the devices were.");
    for (const proto::JobStatus& j : snapshot.jobs) {
      f.Add(Label("job", j.job_id()), j.progress().worker_device_ms() / 1000);
    }
  }
  {
    Family f(&out, "herald_job_scheduler_phase_seconds_total", "counter",
             "Scheduler time per planned iteration phase: plan, encode (the steps).");
    for (const proto::JobStatus& j : snapshot.jobs) {
      const proto::JobProgress& p = j.progress();
      const std::pair<const char*, double> phases[] = {{"plan", p.scheduler_plan_ms()},
                                                       {"encode", p.scheduler_encode_ms()}};
      for (const auto& [phase, ms] : phases) {
        f.Add(absl::StrCat(Label("job", j.job_id()), ",", Label("phase", phase)), ms / 1000);
      }
    }
  }
  {
    Family f(&out, "herald_step_queue_depth", "gauge",
             "Steps waiting in a worker's queue (running job).");
    for (size_t w = 0; w < snapshot.queue_depths.size(); ++w) {
      f.Add(absl::StrCat(Label("job", snapshot.running_job), ",", Label("worker", absl::StrCat(w))),
            double(snapshot.queue_depths[w]));
    }
  }
  {
    Family memory(&out, "herald_ps_memory_bytes", "gauge",
                  "PS shard memory held by the running job's tables.");
    for (size_t s = 0; s < snapshot.ps_stats.size(); ++s) {
      memory.Add(Label("shard", absl::StrCat(s)), double(snapshot.ps_stats[s].memory_bytes()));
    }
    Family rows(&out, "herald_ps_rows", "gauge", "Embedding rows held by a PS shard.");
    for (size_t s = 0; s < snapshot.ps_stats.size(); ++s) {
      uint64_t n = 0;
      for (const proto::TableStats& t : snapshot.ps_stats[s].tables()) n += t.rows();
      rows.Add(Label("shard", absl::StrCat(s)), double(n));
    }
    Family commit(&out, "herald_ps_commit_latency_ms_mean", "gauge",
                  "Mean iteration commit latency of a PS shard.");
    for (size_t s = 0; s < snapshot.ps_stats.size(); ++s) {
      commit.Add(Label("shard", absl::StrCat(s)), snapshot.ps_stats[s].commit_latency_ms_mean());
    }
    Family early(&out, "herald_ps_early_fetches_total", "counter",
                 "Fetches a worker sent ahead (marked early) to a PS shard: served before the "
                 "previous iteration committed, or after it.");
    for (size_t s = 0; s < snapshot.ps_stats.size(); ++s) {
      const proto::PsStatsResponse& st = snapshot.ps_stats[s];
      const std::string shard = Label("shard", absl::StrCat(s));
      early.Add(absl::StrCat(shard, ",", Label("served", "ahead")),
                double(st.early_served_ahead()));
      early.Add(
          absl::StrCat(shard, ",", Label("served", "after_commit")),
          double(st.early_requests() - std::min(st.early_requests(), st.early_served_ahead())));
    }  // The disk tier (shards with a memory budget for the running job); each
    // family's samples follow its header.
    auto tiered =
        [&](const std::string& name, const std::string& type, const std::string& help,
            const std::function<void(Family&, const std::string&, const proto::DiskTierStats&)>&
                add) {
          Family f(&out, name, type, help);
          for (size_t s = 0; s < snapshot.ps_stats.size(); ++s) {
            if (!snapshot.ps_stats[s].has_disk_tier()) continue;
            add(f, Label("shard", absl::StrCat(s)), snapshot.ps_stats[s].disk_tier());
          }
        };
    tiered("herald_ps_resident_rows", "gauge",
           "Rows of the running job in a PS shard's memory (disk tier).",
           [](Family& f, const std::string& shard, const proto::DiskTierStats& d) {
             f.Add(shard, double(d.resident_rows()));
           });
    tiered("herald_ps_memory_budget_bytes", "gauge",
           "Bytes of rows a PS shard keeps in memory for the running job (disk tier).",
           [](Family& f, const std::string& shard, const proto::DiskTierStats& d) {
             f.Add(shard, double(d.memory_budget_bytes()));
           });
    tiered("herald_ps_disk_rows_read_total", "counter",
           "Rows a PS shard read from its disk tier: on a request's critical path, or ahead "
           "(the scheduler's look-ahead).",
           [](Family& f, const std::string& shard, const proto::DiskTierStats& d) {
             f.Add(absl::StrCat(shard, ",", Label("path", "critical")),
                   double(d.rows_read_on_critical_path()));
             f.Add(absl::StrCat(shard, ",", Label("path", "ahead")), double(d.rows_loaded_ahead()));
           });
    tiered("herald_ps_rows_evicted_total", "counter",
           "Rows a PS shard moved from memory to its disk tier.",
           [](Family& f, const std::string& shard, const proto::DiskTierStats& d) {
             f.Add(shard, double(d.rows_evicted()));
           });
  }
  {
    Family f(&out, "herald_node_up", "gauge", "1 if a registered node heartbeats, else 0.");
    for (const proto::NodeStatus& n : nodes) {
      f.Add(absl::StrCat(Label("node", n.node_id()), ",",
                         Label("role", n.role() == proto::NODE_ROLE_PS ? "ps" : "worker"), ",",
                         Label("rank", absl::StrCat(n.rank()))),
            n.alive() ? 1 : 0);
    }
  }
  return out;
}

}  // namespace herald::scheduler
