// `tessera train` (train_command.h).
#include "tessera/tools/train_command.h"

#include <cstdlib>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/param_file.h"
#include "tessera/graph/batch.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/tools/calibrate_command.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/model_loader.h"

namespace tessera::tools {
namespace {

struct TrainArgs {
  std::string model, comm = "thread", strategy = "auto", cluster = "local", optimizer = "sgd";
  int64_t workers = 2, steps = 20, batch = 0, seed = 1, threads = 0, timeout_s = 60;
  double lr = 0.01;
  bool report = false, quiet = false;
  std::string report_json, save_params, checkpoint;
  int64_t checkpoint_every = 0;
};

void AddOptions(ArgParser& p, TrainArgs& a) {
  p.AddPositional("MODEL", "nmt, ocr, zoo:NAME, an .onnx file or a graph .json file", &a.model);
  p.AddInt("--workers", "N", "workers (threads, or the MPI job's ranks; default 2)", &a.workers, 1);
  p.AddChoice("--comm", {"thread", "mpi"}, "communication back-end (default thread)", &a.comm);
  p.AddString("--strategy", "auto|data|model|late|PLAN.json",
              "how layers are split: a planner, or a plan file's strategies (default auto)",
              &a.strategy);
  p.AddString("--cluster", "NAME|FILE",
              "what the prediction assumes (default local: `tessera calibrate`'s file)",
              &a.cluster);
  p.AddInt("--steps", "S", "training steps (default 20)", &a.steps, 1);
  p.AddInt("--batch", "B", "global batch in place of the model's own; divides by N", &a.batch, 1);
  p.AddPositiveNumber("--lr", "LR", "learning rate (default 0.01)", &a.lr);
  p.AddChoice("--optimizer", {"sgd", "momentum", "adam"}, "optimizer (default sgd)", &a.optimizer);
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
      "Until the NMT and OCR jobs have their data, models train on random inputs and targets\n"
      "drawn from --seed. exit codes: 0 ok, 1 model/plan/training/file error, 2 usage error.");
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

absl::StatusOr<partitioner::Plan> MakePlan(const TrainArgs& a, const graph::Graph& g,
                                           std::ostream& err) {
  TS_ASSIGN_OR_RETURN(std::string cluster, ClusterFor(a, err));
  TS_ASSIGN_OR_RETURN(partitioner::Optimizer optimizer, partitioner::ParseOptimizer(a.optimizer));
  const int workers = static_cast<int>(a.workers);
  partitioner::PlanOptions options{.optimizer = optimizer};
  if (!absl::EndsWith(a.strategy, ".json")) {
    TS_ASSIGN_OR_RETURN(options.planner, partitioner::ParsePlannerKind(a.strategy));
    return exec::PlanForWorkers(g, workers, cluster, options);
  }
  TS_ASSIGN_OR_RETURN(partitioner::PlanFileStrategies file,
                      partitioner::ReadPlanStrategies(a.strategy));
  if (file.devices != 0 && file.devices != workers) {
    return absl::InvalidArgumentError(absl::StrCat(a.strategy, " is a plan for ", file.devices,
                                                   " devices; run with --workers ",
                                                   file.devices));
  }
  options.planner = partitioner::PlannerKind::kGiven;
  options.strategies = std::move(file.strategies);
  return exec::PlanForWorkers(g, workers, cluster, options);
}

absl::StatusOr<exec::HybridRunOptions> RunOptions(const TrainArgs& a) {
  exec::HybridRunOptions o{.backend = a.comm, .workers = static_cast<int>(a.workers),
                           .timeout = absl::Seconds(a.timeout_s)};
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  o.worker = {.steps = a.steps, .seed = static_cast<uint64_t>(a.seed),
              .threads = a.threads > 0 ? static_cast<int>(a.threads)
                                       : std::max(1, cores / static_cast<int>(a.workers)),
              .lr = a.lr, .checkpoint_dir = a.checkpoint,
              .checkpoint_every = a.checkpoint_every};
  TS_ASSIGN_OR_RETURN(o.worker.optimizer.kind, exec::ParseOptimizerKind(a.optimizer));
  o.data = {.seed = static_cast<uint64_t>(a.seed) + 1};
  return o;
}

// `mpi` is this process's MPI session under --comm mpi, else null.
absl::Status Train(const TrainArgs& a, const comm::MpiSession* mpi, std::ostream& out,
                   std::ostream& err) {
  const bool rank0 = mpi == nullptr || mpi->world_rank() == 0;
  TS_ASSIGN_OR_RETURN(graph::Graph g, LoadModel(a.model, {.batch = a.batch}));
  TS_ASSIGN_OR_RETURN(partitioner::Plan plan, MakePlan(a, g, err));
  TS_ASSIGN_OR_RETURN(exec::HybridRunOptions options, RunOptions(a));
  if (!a.quiet && rank0) {
    options.worker.progress = &err;
    options.worker.log_every = std::max<int64_t>(1, a.steps / 10);
    err << "tessera train: " << g.name() << ", " << a.workers << " workers (" << a.comm
        << "), global batch " << graph::GraphBatch(g) << ", plan '" << plan.planner << "'\n";
  }
  TS_ASSIGN_OR_RETURN(exec::HybridRun run, exec::TrainHybrid(g, plan, options));
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
        << " steps\n";
  }
  return absl::OkStatus();
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
  std::unique_ptr<comm::MpiSession> mpi;
  if (a.comm == "mpi") {
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
