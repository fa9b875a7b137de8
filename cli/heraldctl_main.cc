// heraldctl: the Herald command-line tool.
//
//   heraldctl gen-data --rows N --seed S --out FILE [--format tsv|bin] [--schema FILE]
//                      [--correlation entities|none] [--cardinality_scale X]
//   heraldctl data stats FILE... [--format auto|tsv|bin] [--schema FILE] [--json]
//   heraldctl convert INPUT... --out FILE [--to bin|tsv] [--from auto|tsv|bin] [--schema FILE]
//                     [--skip_malformed]
//   heraldctl simulate --data FILE --workers N --batch-per-worker B --cache-ratio R
//                      --policy P [--iterations K] [--top-k N] [--budget-ms MS] [--json] ...
//
// Flag names accept '-' and '_' alike (--batch-per-worker = --batch_per_worker).
//
//   heraldctl submit SPEC | status [JOB] | watch JOB | cancel JOB | nodes
//             | export JOB --out DIR [--since DIR] [--scheduler H:P] [--token-file F] [--json]
//                                        [--tls-ca PEM] [--tls-server-name NAME]
//   heraldctl evaluate --model DIR [--batch N] [--max-samples N] [--json] [--predictions FILE]
//   heraldctl model SPEC [--json] [--initial_dense FILE] [--as_graph]
//
// Exit codes: 0 success, 1 the command failed, 2 usage error.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "cli/data_commands.h"
#include "cli/evaluate_command.h"
#include "cli/job_commands.h"
#include "cli/model_command.h"
#include "cli/simulate_command.h"
#include "common/command_line.h"
#include "common/rpc/client_tls_flags.h"

ABSL_FLAG(uint64_t, rows, 0, "gen-data: number of samples to generate");
ABSL_FLAG(uint64_t, seed, 1, "gen-data: generator seed (same seed, same data)");
ABSL_FLAG(std::string, out, "", "gen-data, convert: output file; export: output directory");
ABSL_FLAG(std::string, download, "",
          "export: copy the export from the scheduler's host into this local directory");
ABSL_FLAG(std::string, since, "",
          "export: an earlier export of the same training; write only the rows changed since");
ABSL_FLAG(std::string, model, "",
          "evaluate: an exported model's directory, or a periodic checkpoint (its iteration "
          "directory or MANIFEST)");
ABSL_FLAG(uint32_t, batch, herald::tunables::kEvalBatchSize, "evaluate: samples per forward pass");
ABSL_FLAG(
    uint64_t, max_samples, 0,
    "evaluate: score only the first N held-out samples (0: all), as a job's eval.max_samples");
ABSL_FLAG(std::string, predictions, "",
          "evaluate: also write each held-out sample's label, prediction and inputs to this "
          "file (tab-separated text, docs/python.md)");
ABSL_FLAG(std::string, format, "",
          "gen-data: output format tsv|bin (default tsv); data stats: input format "
          "auto|tsv|bin (default auto)");
ABSL_FLAG(std::string, correlation, "entities",
          "gen-data: entities (features co-occur through users/items/contexts) or none "
          "(independent columns)");
ABSL_FLAG(double, cardinality_scale, 1.0,
          "gen-data: multiplies the Criteo Kaggle table cardinalities (< 1 for small tables)");
ABSL_FLAG(uint32_t, threads, 0,
          "gen-data: generator threads (0: all cores); simulate: planner threads (0: 1)");
ABSL_FLAG(bool, json, false, "read commands: print JSON instead of a table");
ABSL_FLAG(bool, history, false,
          "status JOB: the job's history, a row per iteration (evenly thinned past "
          "kJobHistoryPoints)");
ABSL_FLAG(bool, csv, false, "status JOB --history: print CSV");
ABSL_FLAG(std::string, resume, "",
          "submit: continue from a periodic checkpoint (a MANIFEST, or a job's checkpoint "
          "directory DIR/JOB for its newest), as checkpoint.resume_from");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "submit: this run's checkpoint.dir, replacing the spec's (made absolute)");
ABSL_FLAG(std::string, from, "auto", "convert: input format auto|tsv|bin");
ABSL_FLAG(std::string, schema, "",
          "convert, data stats, gen-data: a DataSchemaSpec text file describing CSV/delimited "
          "data (convert's binary output is format version 2, the schema stored; gen-data "
          "writes rows of its columns)");
ABSL_FLAG(std::string, to, "bin", "convert: output format bin|tsv");
ABSL_FLAG(std::vector<std::string>, data, {},
          "simulate: data files or directories (comma-separated); evaluate: one file (of the "
          "job's data format) to score instead of the held-out split, as a job's "
          "eval.each_file scores a new file");
ABSL_FLAG(uint32_t, workers, 0, "simulate: number of workers");
ABSL_FLAG(uint32_t, batch_per_worker, 0, "simulate: samples per worker per iteration");
ABSL_FLAG(double, cache_ratio, 0.1,
          "simulate: per-worker cache capacity as a fraction of the distinct keys of the data, "
          "table by table (0.1: each worker caches 10% of each table's distinct keys)");
ABSL_FLAG(std::string, policy, "herald",
          "simulate: nocache | vanilla | herald | herald-alloc-only | herald-comm-only | "
          "herald-adaptive");
ABSL_FLAG(uint32_t, top_k, 0,
          "simulate, herald-adaptive: score only the N tables with the highest degree of "
          "infrequency (0: as many as --budget-ms allows)");
ABSL_FLAG(bool, warm_start, false,
          "simulate: frequency-aware warm start (the data's hottest keys fetched into every "
          "cache at iteration 0)");
ABSL_FLAG(double, budget_ms, 0,
          "simulate, herald-adaptive with --top-k 0: planning time per global batch to fit, "
          "by the planner's cost model (docs/scheduler.md)");
ABSL_FLAG(uint64_t, iterations, 0, "simulate: iterations to run (0: every full global batch)");
ABSL_FLAG(bool, handoff, false,
          "simulate: a row one worker holds dirty that exactly one other worker trains next "
          "goes from the one to the other directly (as scheduling.handoff in a job spec; left "
          "out: the policy's default, on for herald policies that own rows)");
ABSL_FLAG(bool, serve, false,
          "simulate: a row one worker holds dirty that several workers, itself among them, "
          "train next stays its own: it sends the others a copy and applies their gradients "
          "(as scheduling.serve in a job spec; left out: the policy's default)");
ABSL_FLAG(bool, init_on_worker, false,
          "simulate: rows never trained are initialised by the workers instead of fetched "
          "(as scheduling.init_on_worker in a job spec; left out: the policy's default)");
ABSL_FLAG(uint32_t, staleness, 0,
          "simulate, policy het: HET's staleness threshold s, 0..1000000 (as "
          "scheduling.staleness in a job spec); 0 plans exactly what vanilla does");
ABSL_FLAG(std::string, allocation, "default",
          "simulate, policy het: whose allocation, default (HET's random split) or "
          "location-aware (Herald's; as scheduling.allocation in a job spec)");
ABSL_FLAG(uint32_t, allocation_passes, 0,
          "simulate, location-aware policies: greedy allocation passes, 0..8 (0: the policy's "
          "default, 2 for location-aware ones); each pass after the first re-places every "
          "sample knowing where the others went (as scheduling.allocation_passes in a job spec)");
ABSL_FLAG(uint32_t, admission, 0,
          "simulate: id admission with this min_count on every table (tables[].admission): "
          "a key gets a row from the batch in which it is seen for the N-th time");
ABSL_FLAG(uint64_t, expire_after, 0,
          "simulate: row expiry on every table (tables[].expiry): a key absent from N "
          "consecutive batches loses its row (0: never)");
ABSL_FLAG(uint64_t, flush_every, 0,
          "simulate: every N iterations write back every dirty row, as a job with "
          "checkpoint.every_iterations N does before each checkpoint (0: never)");
ABSL_FLAG(double, link_gbps, 0,
          "simulate: predict the iteration time on a cluster whose every NIC moves this many "
          "Gb/s each way (0: no prediction; scheduler/planner/network_cost.h)");
ABSL_FLAG(double, latency_us, 0, "simulate, with --link-gbps: one-way latency in microseconds");
ABSL_FLAG(double, host_gbps, 0,
          "simulate, with --link-gbps: a host's rate of processing payload bytes "
          "(serialising, copying, reducing), added to the wire time (0: free)");
ABSL_FLAG(uint32_t, ps_hosts, 1, "simulate, with --link-gbps: PS hosts (a NIC each)");
ABSL_FLAG(uint32_t, row_floats, 0,
          "simulate, with --link-gbps: floats per row, values + optimizer state (0: 2 x --dim)");
ABSL_FLAG(uint64_t, dense_params, 0,
          "simulate, with --link-gbps: dense parameters all-reduced every iteration");
ABSL_FLAG(double, compute_ms_per_sample, 0,
          "simulate, with --link-gbps: a worker's compute time per sample (e.g. its "
          "compute ms per iteration / samples per worker)");
ABSL_FLAG(std::string, eviction, "lru",
          "simulate: cache eviction lru (clean copies before dirty rows, least recently used "
          "first) | lfu");
ABSL_FLAG(uint32_t, dim, 64, "simulate: embedding dimension for the byte figures");
ABSL_FLAG(bool, check, true,
          "simulate: replay every plan through the plan checker (--nocheck to skip)");
ABSL_FLAG(std::string, scheduler, "127.0.0.1:7000",
          "submit, status, watch, cancel, nodes: herald_scheduler address host:port");
ABSL_FLAG(std::string, token_file, "", "job commands: cluster token file");
ABSL_FLAG(std::string, initial_dense, "",
          "model: also write the model's initial dense parameters (float32) to this file");
ABSL_FLAG(bool, as_graph, false,
          "model: print the model section as a model graph in text format (a built-in kind "
          "written out)");
ABSL_FLAG(bool, skip_malformed, false,
          "convert: skip and count malformed records instead of failing on the first");

namespace {

constexpr char kUsage[] = R"(heraldctl: Herald command-line tool

Commands:
  gen-data --rows N --seed S --out FILE [--format tsv|bin] [--correlation entities|none]
           [--cardinality_scale X] [--threads T]
      Synthetic Criteo-shaped data (Criteo Kaggle cardinalities, per-table Zipf skew,
      missing values, labels from a hidden teacher model).
  gen-data --schema FILE --rows N --seed S --out FILE [--cardinality_scale X]
      Delimited text of a schema's columns (1000 × X ids per sparse column, Zipf skew,
      missing values, labels from a hidden teacher), readable with that schema.
  data stats FILE... [--format auto|tsv|bin] [--schema FILE] [--json]
      Rows, per-table distinct keys, share of accesses of the top 1%/10% keys, and the
      malformed lines found (file:line: reason). With a column schema (CSV and --schema,
      or binary version 2): each label, dense and sparse column, and the string ids
      that share a key.
  convert INPUT... --out FILE [--to bin|tsv] [--from auto|tsv|bin] [--schema FILE]
          [--skip_malformed]
      Convert between Criteo TSV, CSV described by --schema (a DataSchemaSpec
      text file) and the Herald binary format (version 2 when a schema is known).
  simulate --data FILE --workers N --batch-per-worker B [--cache-ratio R] [--policy P]
           [--iterations K] [--eviction lru|lfu] [--dim D] [--top-k N] [--budget-ms MS]
           [--warm-start] [--seed S] [--threads T] [--handoff] [--serve]
           [--init-on-worker] [--allocation-passes N] [--flush-every N] [--staleness S]
           [--allocation default|location-aware] [--admission N]
           [--expire-after N]
           [--nocheck] [--json]
           [--link-gbps G [--latency-us U] [--host-gbps H] [--ps-hosts N] [--row-floats F]
            [--dense-params P] [--compute-ms-per-sample C]]
      Run a scheduling policy (nocache, vanilla, herald, herald-alloc-only,
      herald-comm-only, herald-adaptive, het) without any PS or worker: rows fetched, pushed
      and written back per iteration (and the write-backs that only hand a row to the one
      other worker training it next), cache hit rate, scheduling time per batch, the
      planner's largest row directory.
      --cache-ratio: per-worker cache capacity as a fraction of the data's distinct keys,
      table by table. herald-adaptive needs --top-k or --budget-ms; it prints its cost
      model's planning time and says when a --budget-ms is below the planner's base cost
      (NOT reachable: no table scored). --warm-start fetches
      the data's hottest keys into every cache at iteration 0. --threads: planner
      threads (tables planned at once; the plans are the same for any T). --handoff:
      such rows go from worker to worker directly, as jobs with scheduling.handoff do
      (counted as rows_transferred). --serve: a row one worker holds dirty that several
      train next stays with it; it sends the others a copy and applies their gradients,
      as jobs with scheduling.serve do (rows_served_copies, rows_owner_gradients, both
      also in rows_transferred). --init-on-worker: rows never trained are initialised
      by the workers, not fetched (rows_initialized; any policy). --allocation-passes N:
      location-aware allocation (herald, herald-alloc-only, herald-adaptive) re-places
      every sample N - 1 more times, each time knowing where the others went: fewer rows
      moved, more scheduling time (as scheduling.allocation_passes). Left out, these four
      take the policy's defaults, as in a job spec (on with herald; --nohandoff etc.).
      --flush-every N: the rows periodic checkpoints cost (checkpoint.every_iterations).
      --admission N: id admission on every table (tables[].admission): batches filtered
      as a job's are; prints the keys admitted (the tables' rows), those seen fewer
      times and the lookups dropped.
      --expire-after N: row expiry on every table (tables[].expiry): a key absent from
      N consecutive batches loses its row (from every cache, unwritten); prints the rows
      expired and the tables' rows at the end and at their most.
      --staleness S (policy het): HET's bound; its plans are checked against the bound
      (not for exactness) and the largest staleness read is printed; S 0 is vanilla.
      --allocation location-aware (policy het): Herald's allocation with HET's consistency.
      --link-gbps: also predict the iteration time on a cluster of such NICs from the
      bytes each NIC carries per phase, round trips and compute (docs/scheduler.md).

  Job commands (submit, status, watch, cancel, nodes, export) take
  [--scheduler H:P] (default 127.0.0.1:7000) [--token-file F] and, for a TLS
  cluster, [--tls-ca PEM] [--tls-server-name NAME] (docs/operations.md). Finding
  nothing listening at the address, they wait up to 10 s for a scheduler still
  starting, then fail naming it.
  submit SPEC [--resume CHECKPOINT] [--checkpoint_dir DIR]
      Submit a JobSpec (text-format protobuf, or JSON when it starts with '{'); prints
      the job id. An invalid spec is refused naming the field (exit 2).
      --checkpoint_dir puts this run's checkpoints in DIR instead of the spec's
      checkpoint.dir (a launcher's per-run directory: deploy/slurm/herald-slurm).
  status [JOB] [--json]   status JOB --history [--json|--csv]
  watch JOB [--json]   cancel JOB   nodes [--json]
      Job state and progress; live progress until the job ends (exit 0 only if it
      succeeded; a scheduler lost for a while, e.g. restarted, is watched again for
      up to 60 s); cancel; registered PS shards and workers with their health.
  export JOB --out DIR [--since DIR] [--download LOCAL_DIR] [--json]
  export JOB --download LOCAL_DIR
      Write a succeeded job's model (embedding tables + dense weights + MODEL manifest,
      docs/export.md) to DIR, which the scheduler and PS shards write (shared or local
      disk). The most recent succeeded job, or any succeeded job with checkpoint.dir
      (from its final checkpoint, also after a scheduler restart). --download copies
      the export from the scheduler's host into LOCAL_DIR (without --out: the newest
      export this scheduler wrote of JOB).
  model SPEC [--json] [--initial_dense FILE] [--as_graph]
      The job's model as a worker builds it, checked as submit checks it: each
      node of its graph (model.graph, or the graph a built-in kind stands for)
      with its layer, inputs, output width and parameters, and the total.
      --as_graph prints the model section as a graph in text format instead, to
      start a model of one's own from a built-in kind.
      --initial_dense writes the dense parameters every worker starts from
      (float32, the export's dense layout), to replicate the training elsewhere.
  evaluate --model DIR [--data FILE] [--batch N] [--max-samples N] [--json]
           [--predictions FILE]
      Exact held-out AUC and log loss of an exported model, or of a periodic checkpoint,
      on its job's held-out split (data.eval_fraction), computed here on the CPU. With
      the job's eval.batch_size and eval.max_samples it gives the numbers the job's own
      evaluation after that iteration reported. --data scores the first N samples of
      FILE instead (in the job's data format), as eval.each_file scores a new file.
      --predictions writes each scored sample's label, prediction and inputs to FILE
      (tab-separated).

Exit codes: 0 success, 1 the command failed, 2 usage error.
Run 'heraldctl --helpfull' for every flag.)";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "heraldctl: %s\n", std::string(status.message()).c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

// Whether --NAME, --NAME=VALUE or --noNAME is on the command line (dashes
// and underscores alike): a boolean flag left out takes a default that is
// not the flag's own.
bool FlagGiven(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    arg = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    std::replace(arg.begin(), arg.end(), '-', '_');
    if (arg == name || arg == "no" + name) return true;
  }
  return false;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "heraldctl: %s\n\n%s\n", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  // Flag names accept dashes: "--batch-per-worker=8".
  std::vector<std::string> args = herald::ParseCommandLine(argc, argv);
  if (args.empty()) return Usage("no command given");
  const std::string command = args[0];

  if (command == "help") {
    std::printf("%s\n", kUsage);
    return 0;
  }
  if (command == "gen-data") {
    if (args.size() != 1) return Usage("gen-data takes no positional arguments");
    herald::cli::GenDataOptions o;
    o.rows = absl::GetFlag(FLAGS_rows);
    o.seed = absl::GetFlag(FLAGS_seed);
    o.out = absl::GetFlag(FLAGS_out);
    o.format = absl::GetFlag(FLAGS_format).empty() ? "tsv" : absl::GetFlag(FLAGS_format);
    o.correlation = absl::GetFlag(FLAGS_correlation);
    o.cardinality_scale = absl::GetFlag(FLAGS_cardinality_scale);
    o.threads = absl::GetFlag(FLAGS_threads);
    o.schema = absl::GetFlag(FLAGS_schema);
    absl::Status s = herald::cli::RunGenData(o);
    return s.ok() ? 0 : Fail(s);
  }
  if (command == "data") {
    if (args.size() < 2 || args[1] != "stats") return Usage("expected 'data stats FILE...'");
    herald::cli::DataStatsOptions o;
    o.paths.assign(args.begin() + 2, args.end());
    o.format = absl::GetFlag(FLAGS_format).empty() ? "auto" : absl::GetFlag(FLAGS_format);
    o.json = absl::GetFlag(FLAGS_json);
    o.schema = absl::GetFlag(FLAGS_schema);
    absl::Status s = herald::cli::RunDataStats(o);
    return s.ok() ? 0 : Fail(s);
  }
  if (command == "convert") {
    herald::cli::ConvertOptions o;
    o.inputs.assign(args.begin() + 1, args.end());
    o.out = absl::GetFlag(FLAGS_out);
    o.from = absl::GetFlag(FLAGS_from);
    o.to = absl::GetFlag(FLAGS_to);
    o.skip_malformed = absl::GetFlag(FLAGS_skip_malformed);
    o.schema = absl::GetFlag(FLAGS_schema);
    absl::Status s = herald::cli::RunConvert(o);
    return s.ok() ? 0 : Fail(s);
  }
  if (command == "simulate") {
    if (args.size() != 1) return Usage("simulate takes no positional arguments (use --data)");
    herald::cli::SimulateOptions o;
    o.data = absl::GetFlag(FLAGS_data);
    o.format = absl::GetFlag(FLAGS_format).empty() ? "auto" : absl::GetFlag(FLAGS_format);
    o.policy = absl::GetFlag(FLAGS_policy);
    o.workers = absl::GetFlag(FLAGS_workers);
    o.batch_per_worker = absl::GetFlag(FLAGS_batch_per_worker);
    o.cache_ratio = absl::GetFlag(FLAGS_cache_ratio);
    o.iterations = absl::GetFlag(FLAGS_iterations);
    o.eviction = absl::GetFlag(FLAGS_eviction);
    o.dim = absl::GetFlag(FLAGS_dim);
    o.seed = absl::GetFlag(FLAGS_seed);
    o.check = absl::GetFlag(FLAGS_check);
    // Unset options take the policy's default, as in a job spec.
    if (FlagGiven(argc, argv, "handoff")) o.handoff = absl::GetFlag(FLAGS_handoff);
    if (FlagGiven(argc, argv, "serve")) o.serve = absl::GetFlag(FLAGS_serve);
    if (FlagGiven(argc, argv, "init_on_worker")) {
      o.init_on_worker = absl::GetFlag(FLAGS_init_on_worker);
    }
    o.allocation_passes = absl::GetFlag(FLAGS_allocation_passes);
    o.staleness = absl::GetFlag(FLAGS_staleness);
    o.allocation = absl::GetFlag(FLAGS_allocation);
    o.flush_every = absl::GetFlag(FLAGS_flush_every);
    o.admission = absl::GetFlag(FLAGS_admission);
    o.expire_after = absl::GetFlag(FLAGS_expire_after);
    o.top_k = absl::GetFlag(FLAGS_top_k);
    o.warm_start = absl::GetFlag(FLAGS_warm_start);
    o.budget_ms = absl::GetFlag(FLAGS_budget_ms);
    o.threads = std::max<uint32_t>(1, absl::GetFlag(FLAGS_threads));
    o.json = absl::GetFlag(FLAGS_json);
    o.link_gbps = absl::GetFlag(FLAGS_link_gbps);
    o.latency_us = absl::GetFlag(FLAGS_latency_us);
    o.host_gbps = absl::GetFlag(FLAGS_host_gbps);
    o.ps_hosts = absl::GetFlag(FLAGS_ps_hosts);
    o.row_floats = absl::GetFlag(FLAGS_row_floats);
    o.dense_params = absl::GetFlag(FLAGS_dense_params);
    o.compute_ms_per_sample = absl::GetFlag(FLAGS_compute_ms_per_sample);
    absl::Status s = herald::cli::RunSimulate(o);
    return s.ok() ? 0 : Fail(s);
  }
  if (command == "model") {
    if (args.size() != 2) return Usage("expected 'model SPEC'");
    return herald::cli::RunModel(args[1], absl::GetFlag(FLAGS_json),
                                 absl::GetFlag(FLAGS_initial_dense), absl::GetFlag(FLAGS_as_graph));
  }
  if (command == "evaluate") {
    if (args.size() != 1) return Usage("evaluate takes no positional arguments (use --model)");
    herald::cli::EvaluateOptions o;
    o.model_dir = absl::GetFlag(FLAGS_model);
    o.batch = absl::GetFlag(FLAGS_batch);
    o.max_samples = absl::GetFlag(FLAGS_max_samples);
    o.json = absl::GetFlag(FLAGS_json);
    o.predictions_file = absl::GetFlag(FLAGS_predictions);
    const std::vector<std::string> data = absl::GetFlag(FLAGS_data);
    if (data.size() > 1) return Usage("evaluate: --data names one file");
    if (!data.empty()) o.data_file = data[0];
    if (o.model_dir.empty()) return Usage("evaluate: --model DIR is required");
    if (o.batch == 0) return Usage("evaluate: --batch must be > 0");
    absl::Status s = herald::cli::RunEvaluate(o);
    return s.ok() ? 0 : Fail(s);
  }
  absl::StatusOr<herald::rpc::ChannelOptions> channel =
      herald::rpc::ClientChannelOptionsFromFlags();
  if (!channel.ok()) return Usage(std::string(channel.status().message()));
  const herald::cli::SchedulerConnection connection{absl::GetFlag(FLAGS_scheduler),
                                                    absl::GetFlag(FLAGS_token_file), *channel};
  const bool json = absl::GetFlag(FLAGS_json);
  if (command == "submit") {
    if (args.size() != 2) return Usage("expected 'submit SPEC_FILE'");
    return herald::cli::RunSubmit(connection, args[1], absl::GetFlag(FLAGS_resume),
                                  absl::GetFlag(FLAGS_checkpoint_dir));
  }
  if (command == "status") {
    if (args.size() > 2) return Usage("expected 'status [JOB]'");
    const herald::cli::StatusFormat format =
        json ? herald::cli::StatusFormat::kJson
             : (absl::GetFlag(FLAGS_csv) ? herald::cli::StatusFormat::kCsv
                                         : herald::cli::StatusFormat::kText);
    return herald::cli::RunStatus(connection, args.size() == 2 ? args[1] : "", format,
                                  absl::GetFlag(FLAGS_history));
  }
  if (command == "watch" || command == "cancel") {
    if (args.size() != 2) return Usage(absl::StrCat("expected '", command, " JOB'"));
    return command == "watch" ? herald::cli::RunWatch(connection, args[1], json)
                              : herald::cli::RunCancel(connection, args[1]);
  }
  if (command == "export") {
    if (args.size() != 2) return Usage("expected 'export JOB --out DIR'");
    return herald::cli::RunExport(connection, args[1], absl::GetFlag(FLAGS_out),
                                  absl::GetFlag(FLAGS_since), json, absl::GetFlag(FLAGS_download));
  }
  if (command == "nodes") {
    if (args.size() != 1) return Usage("'nodes' takes no arguments");
    return herald::cli::RunNodes(connection, json);
  }
  return Usage(absl::StrCat("unknown command '", command, "'"));
}
