// `tessera train` (train_command.h).
#include "tessera/tools/train_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/op_profile.h"
#include "tessera/exec/param_file.h"
#include "tessera/graph/batch.h"
#include "tessera/jobs/job_registry.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/tools/calibrate_command.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/plan_request.h"

namespace tessera::tools {
namespace {

// Options left at 0 / empty take the model's defaults (jobs/job_registry.h) after parsing.
struct TrainArgs {
  std::string model, comm = "thread", strategy = "auto", cluster = "local", optimizer, op_times;
  std::string lr_schedule = "constant";
  int64_t workers = 2, steps = 0, batch = 0, seed = 1, threads = 0, timeout_s = 60, warmup = 0;
  double lr = 0, clip_norm = 0;
  bool report = false, quiet = false;
  std::string report_json, save_params, checkpoint, data = "task", metrics_json, samples;
  int64_t checkpoint_every = 0, eval_batches = -1;
  int64_t bucket_bytes = 0, first_bucket_bytes = 0;  // 0: the plan's (file's or planner's)
  comm::Backend backend = comm::Backend::kThread;  // parsed from `comm`
};

void AddOptions(ArgParser& p, TrainArgs& a) {
  p.AddPositional("MODEL", "nmt, ocr, zoo:NAME, an .onnx file or a graph .json file", &a.model);
  p.AddInt("--workers", "N", "workers (threads, or the MPI job's ranks; default 2)", &a.workers, 1);
  p.AddChoice("--comm", comm::AllBackendNames(),
              "communication back-end (nccl: CUDA builds, one GPU per worker)",
              &a.comm);
  p.AddString("--strategy", "auto|data|model|late|PLAN.json",
              "how layers are split: a planner, or a plan file's strategies (default auto)",
              &a.strategy);
  p.AddString("--cluster", "NAME|FILE",
              "what the prediction assumes (default local: `tessera calibrate`'s file)",
              &a.cluster);
  AddBucketSizeOptions(p, &a.bucket_bytes, &a.first_bucket_bytes);
  p.AddChoice("--op-times", {"measured", "model"},
              "the plan's compute: measured (this model's ops timed on this machine first; the "
              "default with --cluster local on threads) or model (the cluster's cost model)",
              &a.op_times);
  p.AddInt("--steps", "S", "training steps (default: nmt 1000, ocr 1500, others 20)", &a.steps,
           1);
  p.AddInt("--batch", "B", "global batch in place of the model's own; divides by N", &a.batch, 1);
  p.AddPositiveNumber("--lr", "LR", "learning rate (default: nmt 0.003, ocr 0.003, others 0.01)",
                      &a.lr);
  p.AddChoice("--lr-schedule", {"constant", "linear", "cosine"},
              "the learning rate after the warm-up: constant, or decaying to 0 at the last step",
              &a.lr_schedule);
  p.AddInt("--warmup", "W", "steps of linear warm-up from lr/W to lr (default 0)", &a.warmup, 0);
  p.AddPositiveNumber("--clip-norm", "C",
                      "clip the gradients to this global L2 norm over every worker (default: no "
                      "clipping)",
                      &a.clip_norm);
  p.AddChoice("--optimizer", {"sgd", "momentum", "adam"},
              "optimizer (default: adam for nmt and ocr, else sgd)", &a.optimizer);
  p.AddChoice("--data", {"task", "random"},
              "nmt/ocr: their task's data (default) or random inputs and targets", &a.data);
  p.AddInt("--eval-batches", "N",
           "nmt/ocr: held-out batches evaluated after training (default 16; 0: none)",
           &a.eval_batches, 0);
  p.AddString("--metrics-json", "FILE", "nmt/ocr: write the held-out metrics as JSON",
              &a.metrics_json);
  p.AddString("--samples", "DIR", "ocr: write a few held-out lines as PNG beside what was read",
              &a.samples);
  p.AddInt("--seed", "S", "parameters and data (default 1)", &a.seed, 0);
  p.AddInt("--threads", "T", "intra-op threads per worker (default cores / N)", &a.threads, 1);
  p.AddInt("--timeout", "SECONDS", "a worker that stops answering ends the run (default 60)",
           &a.timeout_s, 1);
  p.AddFlag("--report", "print predicted against measured time and bytes", &a.report);
  p.AddString("--report-json", "FILE", "write the report as JSON", &a.report_json);
  p.AddString("--save-params", "FILE", "write the final parameters (docs/params-format.md)",
              &a.save_params);
  p.AddString("--checkpoint", "DIR",
              "sharded checkpoints (one file per rank, atomic, checksummed); resumes from DIR",
              &a.checkpoint);
  p.AddInt("--checkpoint-every", "K", "also checkpoint every K steps (default: at the end)",
           &a.checkpoint_every, 1);
  p.AddFlag("--quiet", "no progress lines", &a.quiet);
  p.SetEpilog(
      "examples:\n"
      "  tessera train nmt --workers 2 --report\n"
      "  tessera train ocr --workers 2 --strategy data --steps 50 --save-params ocr.tsp\n"
      "  tessera plan nmt --devices 2 --cluster local --executable --format json -o p.json\n"
      "  tessera train nmt --workers 2 --strategy p.json --report-json report.json\n"
      "  mpiexec -n 2 build/bin/tessera train nmt --comm mpi --workers 2 --report\n\n"
      "nmt and ocr train on their tasks (numbers translated from English to German; text lines\n"
      "rendered from a bitmap font) and report held-out metrics; other models train on random\n"
      "inputs and targets drawn from --seed (docs/training-jobs.md).\n"
      "exit codes: 0 ok, 1 model/plan/training/evaluation/file error, 2 usage error.");
}

// Fills the options left out with the model's defaults; an error for job-only options given to
// a model without a job.
absl::Status ApplyDefaults(TrainArgs& a, bool has_job) {
  const jobs::JobDefaults d = jobs::DefaultsFor(a.model);
  if (a.steps == 0) a.steps = d.steps;
  if (a.optimizer.empty()) a.optimizer = d.optimizer;
  if (a.lr == 0) a.lr = d.lr;
  if (a.eval_batches < 0) a.eval_batches = has_job ? d.eval_batches : 0;
  if (has_job) return absl::OkStatus();
  for (const auto& [flag, given] : {std::pair{"--metrics-json", !a.metrics_json.empty()},
                                    std::pair{"--samples", !a.samples.empty()},
                                    std::pair{"--eval-batches", a.eval_batches > 0}}) {
    if (given) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " is for the nmt and ocr jobs, which have a held-out split; ", a.model,
          " trains on random data"));
    }
  }
  return absl::OkStatus();
}

// The cluster the prediction uses; `local` is measured first when it was never calibrated.
absl::StatusOr<std::string> ClusterFor(const TrainArgs& a, std::ostream& err) {
  if (a.cluster != costmodel::kLocalClusterName) return a.cluster;
  if (costmodel::LoadCluster(a.cluster).ok()) return a.cluster;
  const std::string path = costmodel::LocalClusterPath();
  err << "tessera train: no calibrated `local` cluster at " << path
      << "; measuring this machine first (tessera calibrate --quick)\n";
  TS_ASSIGN_OR_RETURN(Calibration c, Calibrate({.quick = true}));
  TS_RETURN_IF_ERROR(WriteClusterFile(path, c.cluster, /*make_folder=*/true));
  return a.cluster;
}

int WorkerThreads(const TrainArgs& a) {
  if (a.threads > 0) return static_cast<int>(a.threads);
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, cores / static_cast<int>(a.workers));
}

// --op-times: measured unless the prediction is for another machine or MPI ranks (each rank
// would time its own ops and could plan apart).
bool MeasureOpTimes(const TrainArgs& a) {
  if (!a.op_times.empty()) return a.op_times == "measured";
  return a.cluster == costmodel::kLocalClusterName && comm::RanksAreThreads(a.backend);
}

// This model's ops and optimizer update timed on one worker's batch shard, as the worker runs
// them.
absl::StatusOr<std::optional<costmodel::MeasuredOpTimes>> OpTimes(
    const TrainArgs& a, const graph::Graph& g, std::ostream& err) {
  if (!MeasureOpTimes(a)) return std::nullopt;
  if (!a.quiet) {
    err << "tessera train: timing the model's ops on this machine for the prediction "
           "(--op-times model skips it)\n";
  }
  exec::OpProfileOptions o{.devices = static_cast<int>(a.workers), .threads = WorkerThreads(a),
                           .steps = 10, .seed = static_cast<uint64_t>(a.seed)};
  TS_ASSIGN_OR_RETURN(o.optimizer.kind, costmodel::ParseOptimizerKind(a.optimizer));
  TS_ASSIGN_OR_RETURN(costmodel::MeasuredOpTimes m, exec::ProfileOps(g, o));
  return m;
}

// How layers are split: a planner by name, or a plan file's strategies and output layouts
// (kGiven).
absl::Status SetStrategy(const TrainArgs& a, partitioner::PlanOptions& options) {
  if (!absl::EndsWith(a.strategy, ".json")) {
    TS_ASSIGN_OR_RETURN(options.planner, partitioner::ParsePlannerKind(a.strategy));
    return absl::OkStatus();
  }
  absl::StatusOr<partitioner::PlanFileStrategies> read =
      partitioner::ReadPlanStrategies(a.strategy);
  if (absl::IsInvalidArgument(read.status())) {  // not a plan file: say how to write one
    return absl::InvalidArgumentError(
        absl::StrCat(read.status().message(), "; write a plan file with `tessera plan MODEL ",
                     "... --format json -o ", a.strategy, "`"));
  }
  TS_ASSIGN_OR_RETURN(partitioner::PlanFileStrategies file, std::move(read));
  if (file.devices != 0 && file.devices != a.workers) {
    return absl::InvalidArgumentError(absl::StrCat(a.strategy, " is a plan for ", file.devices,
                                                   " devices; run with --workers ",
                                                   file.devices));
  }
  options.planner = partitioner::PlannerKind::kGiven;
  options.strategies = std::move(file.strategies);
  options.output_layouts = std::move(file.output_layouts);
  options.bucket_bytes = file.bucket_bytes;
  options.first_bucket_bytes = file.first_bucket_bytes;
  return absl::OkStatus();
}

absl::StatusOr<partitioner::Plan> MakePlan(const TrainArgs& a, const graph::Graph& g,
                                           std::ostream& err) {
  TS_ASSIGN_OR_RETURN(std::string cluster, ClusterFor(a, err));
  TS_ASSIGN_OR_RETURN(costmodel::OptimizerKind optimizer,
                      costmodel::ParseOptimizerKind(a.optimizer));
  partitioner::PlanOptions options{.optimizer = optimizer};
  TS_RETURN_IF_ERROR(SetStrategy(a, options));
  if (a.bucket_bytes > 0) options.bucket_bytes = a.bucket_bytes;
  if (a.first_bucket_bytes > 0) options.first_bucket_bytes = a.first_bucket_bytes;
  // Last: a bad strategy or plan file is reported without timing the ops first.
  TS_ASSIGN_OR_RETURN(std::optional<costmodel::MeasuredOpTimes> op_times, OpTimes(a, g, err));
  return exec::PlanForWorkers(g, static_cast<int>(a.workers), cluster, options, op_times);
}

absl::StatusOr<exec::HybridRunOptions> RunOptions(const TrainArgs& a) {
  exec::HybridRunOptions o{.backend = a.backend, .workers = static_cast<int>(a.workers),
                           .timeout = absl::Seconds(a.timeout_s)};
  o.worker = {.steps = a.steps, .seed = static_cast<uint64_t>(a.seed),
              .threads = WorkerThreads(a), .lr = a.lr, .warmup_steps = a.warmup,
              .clip_norm = a.clip_norm, .checkpoint_dir = a.checkpoint,
              .checkpoint_every = a.checkpoint_every};
  TS_ASSIGN_OR_RETURN(o.worker.decay, exec::ParseDecay(a.lr_schedule));
  TS_ASSIGN_OR_RETURN(o.worker.optimizer.kind, costmodel::ParseOptimizerKind(a.optimizer));
  o.data = {.seed = static_cast<uint64_t>(a.seed) + 1};
  return o;
}

// Evaluates rank 0's parameters on the job's held-out split; prints and writes the metrics.
absl::Status Evaluate(const TrainArgs& a, const jobs::TrainingJob& job, const graph::Graph& g,
                      const exec::HybridRun& run, double train_s, std::ostream& out,
                      std::ostream& err) {
  if (a.eval_batches == 0) return absl::OkStatus();
  if (!a.quiet) {
    err << "tessera train: evaluating on " << a.eval_batches << " held-out batches of "
        << graph::GraphBatch(g) << "\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  TS_ASSIGN_OR_RETURN(jobs::Evaluation e,
                      job.Evaluate({&g, &run.parameters, &run.buffers},
                                   {.batches = a.eval_batches, .threads = cores,
                                    .samples_dir = a.samples}));
  const double eval_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "held-out";
  for (const auto& [name, value] : e.metrics) out << "  " << name << " " << value;
  out << "\n";
  for (const std::string& line : e.samples) out << "  " << line << "\n";
  if (!a.samples.empty()) err << "tessera train: wrote " << e.files.size() << " files to " << a.samples << "\n";
  if (!a.metrics_json.empty()) {
    const nlohmann::json j = jobs::MetricsJson(e, {.model = a.model, .steps = a.steps,
                                             .seconds = train_s, .eval_seconds = eval_s,
                                             .workers = static_cast<int>(a.workers)});
    TS_RETURN_IF_ERROR(base::WriteFileAtomically(a.metrics_json, j.dump(2) + "\n", "metrics file"));
    err << "tessera train: wrote " << a.metrics_json << "\n";
  }
  return absl::OkStatus();
}

// `mpi` is this process's MPI session under --comm mpi, else null.
absl::Status Train(TrainArgs a, const comm::MpiSession* mpi, std::ostream& out,
                   std::ostream& err) {
  const bool rank0 = mpi == nullptr || mpi->world_rank() == 0;
  if (mpi == nullptr) {  // threads: refuse a back-end that cannot start before timing anything
    if (absl::Status s = comm::CheckThreadRanks({.backend = a.backend},
                                                static_cast<int>(a.workers));
        !s.ok()) {
      if (!absl::IsFailedPrecondition(s)) return s;
      return absl::FailedPreconditionError(
          absl::StrCat(s.message(), " (--comm thread, or fewer --workers)"));
    }
  }
  const std::unique_ptr<jobs::TrainingJob> job =
      jobs::JobFor(a.model, static_cast<uint64_t>(a.seed));
  TS_RETURN_IF_ERROR(ApplyDefaults(a, job != nullptr));
  TS_ASSIGN_OR_RETURN(graph::Graph g, LoadModel(a.model, {.batch = a.batch}));
  if (job != nullptr && a.data == "task") {
    TS_RETURN_IF_ERROR(job->TrainingData(g).status());  // the model is the job's (checked once)
  }
  TS_ASSIGN_OR_RETURN(partitioner::Plan plan, MakePlan(a, g, err));
  TS_ASSIGN_OR_RETURN(exec::HybridRunOptions options, RunOptions(a));
  if (job != nullptr && a.data == "task") {
    options.data_source = [&job](const graph::Graph& graph) { return job->TrainingData(graph); };
  }
  if (!a.quiet && rank0) {
    options.worker.progress = &err;
    options.worker.progress_is_terminal = mpi == nullptr && isatty(STDERR_FILENO) != 0;
    options.worker.log_every = std::max<int64_t>(1, a.steps / 10);
    err << "tessera train: " << g.name() << ", " << a.workers << " workers (" << a.comm
        << "), global batch " << graph::GraphBatch(g) << ", plan '" << plan.planner << "'\n";
  }
  const auto start = std::chrono::steady_clock::now();
  TS_ASSIGN_OR_RETURN(exec::HybridRun run, exec::TrainHybrid(g, plan, options));
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!rank0) return absl::OkStatus();
  for (const std::string& w : run.warnings) err << "tessera train: warning: " << w << "\n";
  if (run.resumed_from_step > 0) {
    err << "tessera train: resumed from step " << run.resumed_from_step << " (" << a.checkpoint
        << ")\n";
  }
  if (!a.save_params.empty()) {
    TS_RETURN_IF_ERROR(exec::WriteParamFile(a.save_params, exec::WholeParameters(g, run.parameters)));
    err << "tessera train: wrote " << a.save_params << "\n";
  }
  if (!a.report_json.empty()) {
    TS_RETURN_IF_ERROR(base::WriteFileAtomically(
        a.report_json, exec::RunReportJson(run.report).dump(2) + "\n", "report file"));
    err << "tessera train: wrote " << a.report_json << "\n";
  }
  if (a.report) out << exec::RunReportTable(run.report);
  if (!run.report.losses.empty()) {
    out << "final loss " << run.report.losses.back() << " after " << run.report.steps
        << " steps (" << absl::StrFormat("%.1f", train_s) << " s)\n";
  }
  if (job == nullptr) return absl::OkStatus();
  return Evaluate(a, *job, g, run, train_s, out, err);
}

}  // namespace

int RunTrain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  TrainArgs a;
  ArgParser parser("tessera train",
                   "Trains a model on N workers with a hybrid-parallel plan: data-parallel\n"
                   "layers on batch shards with bucketed gradient all-reduce during backward,\n"
                   "model-parallel and late-multiply layers with their collectives.");
  AddOptions(parser, a);
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  a.backend = *comm::ParseBackend(a.comm);  // one of AddChoice's names
  if (a.op_times == "measured" && a.cluster != costmodel::kLocalClusterName) {
    err << "tessera train: --op-times measured times this machine's ops, so it goes with "
           "--cluster local, not '" << a.cluster << "'; pass --op-times model\n";
    return 2;
  }
  if (a.op_times == "measured" && a.backend == comm::Backend::kMpi) {
    err << "tessera train: --op-times measured is for the thread back-end (each MPI rank would "
           "time its own ops and could plan apart); pass --op-times model\n";
    return 2;
  }
  std::unique_ptr<comm::MpiSession> mpi;
  if (a.backend == comm::Backend::kMpi) {
    absl::StatusOr<std::unique_ptr<comm::MpiSession>> session =
        comm::MpiSession::Start(nullptr, nullptr);
    if (!session.ok()) {
      err << "tessera train: " << session.status().message() << "\n";
      return 1;
    }
    mpi = *std::move(session);
  }
  if (absl::Status s = Train(a, mpi.get(), out, err); !s.ok()) {
    err << "tessera train: " << s.message() << "\n";
    if (mpi != nullptr) {
      // MPI_Finalize would wait for a peer that may be dead: leave without it, as MPI jobs do.
      out.flush();
      err.flush();
      std::_Exit(1);
    }
    return 1;
  }
  return 0;
}

}  // namespace tessera::tools
