// `tessera train` (train_command.h).
#include "tessera/tools/train_command.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/param_file.h"
#include "tessera/exec/training_trace.h"
#include "tessera/graph/attach_loss.h"
#include "tessera/graph/batch.h"
#include "tessera/jobs/job_registry.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/cli/flag_hint.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/plan_request.h"
#include "tessera/tools/train_args.h"
#include "tessera/tools/train_job.h"
#include "tessera/tools/train_monitor.h"
#include "tessera/tools/train_plan.h"

namespace tessera::tools {
namespace {

void AddOptions(ArgParser& p, TrainArgs& a) {
  p.AddPositional("MODEL", "nmt, ocr, zoo:NAME, an .onnx file or a graph .json file", &a.model);
  p.AddInt("--workers", "N", "workers (threads, or the MPI job's ranks)", &a.workers, 1);
  p.AddChoice("--comm", comm::AllBackendNames(),
              "communication back-end (nccl: CUDA builds, one GPU per worker)",
              &a.comm);
  p.AddChoice("--device", {"cpu", "cuda"},
              "where the step runs: cpu, or cuda (CUDA builds: one worker on GPU 0, the whole "
              "step in GPU memory)",
              &a.device);
  p.AddFlag("--tf32", "cuda: let cuBLAS and cuDNN multiply in TF32 (off: exact float32)",
            &a.tf32);
  p.AddString("--strategy", "auto|data|model|late|PLAN.json",
              "how layers are split: a planner, or a plan file's strategies",
              &a.strategy);
  p.AddString("--cluster", "NAME|FILE",
              "what the prediction assumes; local is `tessera calibrate`'s file",
              &a.cluster);
  AddBucketSizeOptions(p, &a.bucket_bytes, &a.first_bucket_bytes);
  p.AddChoice("--op-times", {"measured", "model", "remeasure"},
              "the plan's compute: measured (this model's ops timed on this machine once and "
              "kept in the cluster file), remeasure (time them again) or model (the cluster's "
              "cost model)",
              &a.op_times)
      .Default("measured with --cluster local, else model");
  p.AddChoice("--loss", {"cross-entropy", "ctc"},
              "a model whose first output is logits (an ONNX export without its loss): attach "
              "this loss, with a new integer input --target. cross-entropy: logits [N, C, ...], "
              "classes on axis 1 as in ONNX, target [N, ...]; ctc: logits [T, N, C], blank 0, "
              "target [N, T/2] and NAME_input_lengths, NAME_target_lengths [N]",
              &a.loss)
      .Default("the model's own loss");
  p.AddString("--target", "NAME", "--loss: the name of the new target input", &a.target);
  p.AddInt("--steps", "S", "training steps", &a.steps, 1).Default("nmt 1000, ocr 1500, others 20");
  p.AddInt("--batch", "B", "global batch in place of the model's own; divides by N", &a.batch, 1)
      .Default("the model's");
  p.AddPositiveNumber("--lr", "LR", "learning rate", &a.lr)
      .Default("nmt 0.003, ocr 0.003, others 0.01");
  p.AddChoice("--lr-schedule", {"constant", "linear", "cosine"},
              "the learning rate after the warm-up: constant, or decaying to 0 at --steps",
              &a.lr_schedule);
  p.AddInt("--warmup", "W", "steps of linear warm-up from lr/W to lr", &a.warmup, 0);
  p.AddPositiveNumber("--clip-norm", "C",
                      "clip the gradients to this global L2 norm over every worker", &a.clip_norm)
      .Default("no clipping");
  p.AddChoice("--optimizer", {"sgd", "momentum", "adam"}, "optimizer", &a.optimizer)
      .Default("adam for nmt and ocr, else sgd");
  p.AddChoice("--data", {"task", "random"},
              "nmt/ocr: their task's data or random inputs and targets", &a.data);
  p.AddInt("--eval-batches", "N",
           "nmt/ocr: held-out batches of each evaluation, after training and every --eval-every "
           "steps (0: none)",
           &a.eval_batches, 0)
      .Default("16 for nmt and ocr");
  p.AddString("--metrics-json", "FILE", "nmt/ocr: write the held-out metrics as JSON",
              &a.metrics_json);
  p.AddString("--samples", "DIR", "ocr: write a few held-out lines as PNG beside what was read",
              &a.samples);
  p.AddInt("--seed", "S", "seed of the parameters and the data", &a.seed, 0);
  p.AddInt("--threads", "T", "intra-op threads per worker", &a.threads, 1)
      .Default("cores / N, at least 1");
  p.AddInt("--timeout", "SECONDS", "a worker that stops answering ends the run", &a.timeout_s, 1);
  p.AddFlag("--report", "print predicted against measured time and bytes", &a.report);
  p.AddString("--report-json", "FILE", "write the report as JSON", &a.report_json);
  p.AddString("--save-params", "FILE", "write the final parameters (docs/params-format.md)",
              &a.save_params);
  p.AddString("--checkpoint", "DIR",
              "sharded checkpoints (one file per rank, atomic, checksummed); resumes from DIR",
              &a.checkpoint);
  p.AddInt("--checkpoint-every", "K", "also checkpoint every K steps", &a.checkpoint_every, 1)
      .Default("only at the end");
  p.AddString("--trace", "FILE",
              "write the last steps' measured timeline as Chrome trace JSON (Perfetto)",
              &a.trace);
  p.AddInt("--trace-steps", "N", "the last steps --trace keeps", &a.trace_steps, 1);
  p.AddFlag("--quiet", "no progress lines", &a.quiet);
  p.SetEpilog(
      "examples:\n"
      "  tessera train nmt --workers 2 --report\n"
      "  tessera train ocr --workers 2 --strategy data --steps 50 --save-params ocr.tsp\n"
      "  tessera plan nmt --devices 2 --cluster local --executable --format json -o p.json\n"
      "  tessera train nmt --workers 2 --strategy p.json --report-json report.json\n"
      "  tessera train nmt --device cuda --steps 300\n"
      "  tessera train nmt --train train.tsv --valid valid.tsv --checkpoint run1\n"
      "  tessera train classifier.onnx --loss cross-entropy --target labels --steps 100\n"
      "  mpiexec -n 2 build/bin/tessera train nmt --comm mpi --workers 2 --report\n\n"
      "nmt and ocr train on their tasks (numbers translated from English to German; text lines\n"
      "rendered from a bitmap font) and report held-out metrics; other models train on random\n"
      "inputs and targets drawn from --seed (docs/training-jobs.md).\n"
      "With --checkpoint DIR, running the same command again resumes from DIR with the plan it\n"
      "ran (DIR/plan.json); options left out take its settings.\n"
      "exit codes: 0 ok, 1 model/plan/training/evaluation/file error, 2 usage error,\n"
      "130 interrupted (Ctrl-C: the workers stop after the same step and checkpoint).");
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
                                    std::pair{"--eval-batches", a.eval_batches > 0},
                                    std::pair{"--eval-every", a.eval_every > 0}}) {
    if (given) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " is for the nmt and ocr jobs, which have a held-out split; ", a.model,
          " trains on random data"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<exec::HybridRunOptions> RunOptions(const TrainArgs& a) {
  exec::HybridRunOptions o{.backend = a.backend, .workers = static_cast<int>(a.workers),
                           .timeout = absl::Seconds(a.timeout_s)};
  o.worker = {.steps = a.steps, .seed = static_cast<uint64_t>(a.seed),
              .threads = WorkerThreads(a), .lr = a.lr, .warmup_steps = a.warmup,
              .clip_norm = a.clip_norm, .checkpoint_dir = a.checkpoint,
              .checkpoint_every = a.checkpoint_every};
  TS_ASSIGN_OR_RETURN(o.worker.device, exec::ParseDevice(a.device));
  o.worker.tf32 = a.tf32;
  o.worker.trace_steps = a.trace.empty() ? 0 : a.trace_steps;
  TS_ASSIGN_OR_RETURN(o.worker.decay, exec::ParseDecay(a.lr_schedule));
  TS_ASSIGN_OR_RETURN(o.worker.optimizer.kind, costmodel::ParseOptimizerKind(a.optimizer));
  o.data = {.seed = static_cast<uint64_t>(a.seed) + 1};
  return o;
}

// --trace: every worker's measured timeline (exec/training_trace.h), written by rank 0.
absl::Status WriteTrace(const TrainArgs& a, const exec::HybridRun& run, std::ostream& err) {
  if (a.trace.empty()) return absl::OkStatus();
  const nlohmann::json trace =
      exec::TrainingTrace(run.trace, {.model = run.report.model, .backend = run.report.backend});
  TS_RETURN_IF_ERROR(base::WriteFileAtomically(a.trace, trace.dump() + "\n", "trace file"));
  err << "tessera train: wrote " << a.trace << "\n";
  return absl::OkStatus();
}

// Evaluates rank 0's parameters on the job's held-out split; prints and writes the metrics.
absl::Status Evaluate(const TrainArgs& a, const jobs::TrainingJob& job, const graph::Graph& g,
                      const exec::HybridRun& run, double train_s, TrainMonitor& monitor,
                      std::ostream& out, std::ostream& err) {
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
                                    .device = *exec::ParseDevice(a.device), .tf32 = a.tf32,
                                    .samples_dir = a.samples,
                                    .predictions = a.predictions}));
  const double eval_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "held-out" << MetricsText(e.metrics) << "\n";
  monitor.AddEval({.step = run.resumed_from_step + static_cast<int64_t>(run.report.losses.size()),
                   .metrics = e.metrics, .eval_s = eval_s});
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

// The flags behind the library's settings (cli/flag_hint.h).
const FlagNames kTrainFlags = {
    {"devices", "--workers"},
    {"batch", "--batch"},
    {"cluster", "--cluster FILE"},
    {"symbolic_dims", "--dim {}=N"},
    {"executable", "make the plan file with `tessera plan ... --executable`"}};

// Raised by SIGINT while training: every worker ends after the same step and checkpoints.
std::atomic<bool> interrupted{false};

extern "C" void OnInterrupt(int) {
  interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// SIGINT raises `interrupted` while this lives.
class InterruptScope {
 public:
  InterruptScope() { previous_ = std::signal(SIGINT, OnInterrupt); }
  ~InterruptScope() { std::signal(SIGINT, previous_); }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  void (*previous_)(int) = SIG_DFL;
};

// Writes nothing: the notes of ranks other than 0.
class NullStream : public std::ostream {
 public:
  NullStream() : std::ostream(nullptr) {}
};

// MODEL at --batch (the job's own model when it builds one), with the loss of --loss KIND
// --target NAME attached to its logits
// (graph/attach_loss.h); `usage_error` is set when attaching fails (a usage error).
absl::StatusOr<graph::Graph> LoadForTraining(const TrainArgs& a, const jobs::TrainingJob* job,
                                             bool& usage_error) {
  TS_ASSIGN_OR_RETURN(graph::Graph g, job != nullptr && job->BuildsModel()
                                          ? job->Model(a.batch)
                                          : LoadModel(a.model, {.batch = a.batch}));
  if (a.loss.empty()) return g;
  const graph::AttachedLoss kind =
      a.loss == "ctc" ? graph::AttachedLoss::kCtc : graph::AttachedLoss::kCrossEntropy;
  absl::StatusOr<graph::Graph> out = graph::AttachLoss(g, {.kind = kind, .target = a.target});
  if (out.ok()) return out;
  usage_error = true;
  return absl::Status(out.status().code(),
                      absl::StrCat(a.model, ": --loss ", a.loss, ": ", out.status().message()));
}

// The shapes a job's batches run at (TrainingJob::ModelVariants), by the model's first data
// input, e.g. "src_tokens [32,12], [32,24], [32,36], [32,48]".
std::string ShapesNote(const graph::Graph& g, const std::vector<graph::Graph>& variants) {
  const graph::TensorId first = g.TensorsWithRole(graph::TensorRole::kInput).front();
  std::vector<std::string> shapes;
  for (const graph::Graph& v : variants) {
    shapes.push_back(absl::StrCat("[", absl::StrJoin(v.tensor(first).shape, ","), "]"));
  }
  shapes.push_back(absl::StrCat("[", absl::StrJoin(g.tensor(first).shape, ","), "]"));
  return absl::StrCat("tessera train: each batch runs at the smallest of ", shapes.size(),
                      " shapes that holds it: ", g.tensor(first).name, " ",
                      absl::StrJoin(shapes, ", "), "\n");
}

// `mpi` is this process's MPI session under --comm mpi, else null. `usage_error` is set when
// the error is the command line's (exit code 2).
absl::Status Train(TrainArgs a, const comm::MpiSession* mpi, std::ostream& out,
                   std::ostream& err, bool& usage_error) {
  const bool rank0 = mpi == nullptr || mpi->world_rank() == 0;
  NullStream null;
  std::ostream& note = rank0 ? err : null;
  TS_ASSIGN_OR_RETURN(const std::unique_ptr<TrainMonitor> monitor, TrainMonitor::Start(a, rank0));
  TS_ASSIGN_OR_RETURN(const std::optional<exec::RunRecord> record, ReadCheckpointRecord(a));
  if (record.has_value()) AdoptCheckpoint(*record, a);
  if (mpi == nullptr) {  // threads: refuse a back-end that cannot start before timing anything
    if (absl::Status s = comm::CheckThreadRanks({.backend = a.backend},
                                                static_cast<int>(a.workers));
        !s.ok()) {
      if (!absl::IsFailedPrecondition(s)) return s;
      return absl::FailedPreconditionError(
          absl::StrCat(s.message(), " (--comm thread, or fewer --workers)"));
    }
  }
  if (a.device != "cpu") {  // before planning: say at once when the device cannot run here
    TS_ASSIGN_OR_RETURN(const exec::Device device, exec::ParseDevice(a.device));
    TS_RETURN_IF_ERROR(exec::MakeBackend({.device = device}).status());
  }
  TS_ASSIGN_OR_RETURN(const std::unique_ptr<jobs::TrainingJob> job,
                      MakeJob(a, mpi != nullptr, note));
  TS_RETURN_IF_ERROR(ApplyDefaults(a, job != nullptr));
  TS_ASSIGN_OR_RETURN(graph::Graph g, LoadForTraining(a, job.get(), usage_error));
  if (a.beam > graph::GraphBatch(g)) {  // before training: evaluation would refuse it
    usage_error = true;
    return absl::InvalidArgumentError(absl::StrCat(
        "--beam ", a.beam, " is more than the global batch ", graph::GraphBatch(g),
        ": a sentence's hypotheses are decoded as rows of it; pass a smaller --beam or a larger "
        "--batch"));
  }
  if (job != nullptr && a.data == "task") {
    TS_RETURN_IF_ERROR(job->TrainingData(g).status());  // the model is the job's (checked once)
  }
  TS_ASSIGN_OR_RETURN(partitioner::Plan plan, PlanTraining(a, g, record, note));
  if (record.has_value() && !a.quiet) {
    note << "tessera train: resuming the run in " << a.checkpoint << " with its plan ("
         << a.workers << " workers, global batch " << graph::GraphBatch(g) << ")\n";
  }
  TS_ASSIGN_OR_RETURN(exec::HybridRunOptions options, RunOptions(a));
  if (job != nullptr && a.data == "task") {
    options.data_source = [&job](const graph::Graph& graph) { return job->TrainingData(graph); };
    TS_ASSIGN_OR_RETURN(options.worker.variants, job->ModelVariants(g));
    if (!options.worker.variants.empty() && !a.quiet) note << ShapesNote(g, options.worker.variants);
  }
  TS_RETURN_IF_ERROR(monitor->Attach(a, options, job.get(), g));
  if (!a.quiet && rank0) {
    options.worker.progress = &err;
    options.worker.progress_is_terminal = mpi == nullptr && isatty(STDERR_FILENO) != 0;
    options.worker.log_every = std::max<int64_t>(1, a.steps / 10);
    err << "tessera train: " << g.name() << ", " << a.workers << " workers (" << a.comm
        << "), global batch " << graph::GraphBatch(g) << ", plan '" << plan.planner << "'\n";
  }
  const auto start = std::chrono::steady_clock::now();
  interrupted.store(false);
  options.worker.stop = &interrupted;
  absl::StatusOr<exec::HybridRun> trained;
  {
    InterruptScope scope;
    trained = exec::TrainHybrid(g, plan, options);
  }
  TS_ASSIGN_OR_RETURN(exec::HybridRun run, std::move(trained));
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (run.stopped) {
    TS_RETURN_IF_ERROR(monitor->Finish(err));  // the report of the steps done
    const int64_t done = run.resumed_from_step + static_cast<int64_t>(run.report.losses.size());
    return absl::CancelledError(absl::StrCat(
        "interrupted after step ", done, a.checkpoint.empty()
            ? "; nothing was saved (--checkpoint DIR keeps a run that can resume)"
            : absl::StrCat("; ", a.checkpoint, " holds it: run the same command to resume")));
  }
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
  TS_RETURN_IF_ERROR(WriteTrace(a, run, err));
  if (a.report) out << exec::RunReportTable(run.report);
  if (!run.report.losses.empty()) {
    out << "final loss " << run.report.losses.back() << " after " << run.report.steps
        << " steps (" << absl::StrFormat("%.1f", train_s) << " s)\n";
  }
  if (job != nullptr) TS_RETURN_IF_ERROR(Evaluate(a, *job, g, run, train_s, *monitor, out, err));
  return monitor->Finish(err);
}

}  // namespace

int RunTrain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  TrainArgs a;
  ArgParser parser("tessera train",
                   "Trains a model on N workers with a hybrid-parallel plan: data-parallel\n"
                   "layers on batch shards with bucketed gradient all-reduce during backward,\n"
                   "model-parallel and late-multiply layers with their collectives.");
  AddOptions(parser, a);
  AddDataOptions(parser, a);
  AddMonitorOptions(parser, a);
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  for (const char* flag : {"--workers", "--batch", "--optimizer", "--seed", "--strategy",
                           "--vocab-size", "--max-length", "--length-buckets", "--width", "--beam",
                           "--length-penalty", "--no-repeat-ngram"}) {
    if (parser.Given(flag)) a.given.insert(flag);
  }
  if (absl::Status s = CheckDataOptions(a); !s.ok()) {
    err << "tessera train: " << s.message() << "\n";
    return 2;
  }
  if (parser.Given("--target") && a.loss.empty()) {
    err << "tessera train: --target names the target input that --loss adds; pass --loss "
           "cross-entropy or --loss ctc with it (a model with its own loss has its own targets)\n";
    return 2;
  }
  a.backend = *comm::ParseBackend(a.comm);  // one of AddChoice's names
  if (a.device == "cuda" && !parser.Given("--workers")) a.workers = 1;
  if (a.device == "cuda" && a.workers != 1) {
    err << "tessera train: --device cuda trains one worker on GPU 0 so far; pass --workers 1 "
           "(or --device cpu for " << a.workers << " workers)\n";
    return 2;
  }
  if (a.tf32 && a.device != "cuda") {
    err << "tessera train: --tf32 is for --device cuda (the CPU kernels multiply in float32)\n";
    return 2;
  }
  const bool preset = costmodel::ClusterPreset(a.cluster).ok();
  if ((a.op_times == "measured" || a.op_times == "remeasure") && preset) {
    err << "tessera train: --op-times " << a.op_times << " times this machine's ops, so it goes "
        << "with --cluster local (or a cluster file `tessera calibrate` wrote), not the preset '"
        << a.cluster << "'; pass --op-times model\n";
    return 2;
  }
  if (a.op_times == "remeasure" && a.backend == comm::Backend::kMpi) {
    err << "tessera train: --op-times remeasure is for the thread back-end (each MPI rank would "
           "time its own ops and could plan apart); remeasure on threads, then run MPI jobs with "
           "the stored times\n";
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
  bool usage_error = false;
  if (absl::Status s = Train(a, mpi.get(), out, err, usage_error); !s.ok()) {
    err << "tessera train: " << WithFlag(s, kTrainFlags).message() << "\n";
    if (absl::IsCancelled(s)) return 130;  // interrupted, as shells report SIGINT
    if (usage_error && mpi == nullptr) return 2;
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
