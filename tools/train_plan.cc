// The plan `tessera train` runs (train_plan.h).
#include "tessera/tools/train_plan.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/op_times.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/op_profile.h"
#include "tessera/graph/batch.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/partitioner/planner.h"
#include "tessera/tools/calibrate_command.h"

namespace tessera::tools {
namespace {

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

// The cluster file op times are stored in: `local`'s, or a cluster file given by path.
std::string OpTimesFile(const std::string& cluster) {
  return cluster == costmodel::kLocalClusterName ? costmodel::LocalClusterPath() : cluster;
}

// Times this model's ops and the optimizer's update on one worker's batch shard, as the
// workers run them, and stores them in `path`'s cluster under `key`; returns them as stored.
absl::StatusOr<costmodel::MeasuredOpTimes> MeasureAndStore(const TrainArgs& a,
                                                           const graph::Graph& g,
                                                           const std::string& path,
                                                           const std::string& key,
                                                           std::ostream& err) {
  err << "tessera train: timing the model's ops on this machine for the prediction (once; "
         "they are kept in "
      << path << ")\n";
  exec::OpProfileOptions o{.devices = static_cast<int>(a.workers), .threads = WorkerThreads(a),
                           .steps = 10, .seed = static_cast<uint64_t>(a.seed)};
  TS_ASSIGN_OR_RETURN(o.optimizer.kind, costmodel::ParseOptimizerKind(a.optimizer));
  TS_ASSIGN_OR_RETURN(costmodel::MeasuredOpTimes m, exec::ProfileOps(g, o));
  TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec cluster, costmodel::LoadCluster(path));
  cluster.op_times[key] = std::move(m);
  TS_RETURN_IF_ERROR(WriteClusterFile(path, cluster, /*make_folder=*/false));
  // What a later run reads: the file's numbers (they read back to the same bits).
  TS_ASSIGN_OR_RETURN(cluster, costmodel::LoadCluster(path));
  return cluster.op_times.at(key);
}

// The op times the plan is priced with (--op-times): none for `model`; this machine's, stored
// in the cluster file, for `measured` (the default with --cluster local) and `remeasure`.
// Measured when missing (or asked), on threads only: MPI ranks use stored times or none.
absl::StatusOr<std::optional<costmodel::MeasuredOpTimes>> OpTimes(const TrainArgs& a,
                                                                  const graph::Graph& g,
                                                                  const std::string& cluster,
                                                                  std::ostream& err) {
  const std::string mode = !a.op_times.empty()                             ? a.op_times
                           : cluster == costmodel::kLocalClusterName ? "measured"
                                                                     : "model";
  if (mode == "model") return std::nullopt;
  TS_ASSIGN_OR_RETURN(const costmodel::OptimizerKind optimizer,
                      costmodel::ParseOptimizerKind(a.optimizer));
  const std::string key =
      costmodel::OpTimesKey(g, static_cast<int>(a.workers), WorkerThreads(a), optimizer,
                            exec::cpu::BlasKernelsInUse().running);
  const std::string path = OpTimesFile(cluster);
  TS_ASSIGN_OR_RETURN(const costmodel::ClusterSpec spec, costmodel::LoadCluster(path));
  const auto stored = spec.op_times.find(key);
  if (mode == "measured" && stored != spec.op_times.end()) return stored->second;
  if (comm::RanksAreThreads(a.backend)) return MeasureAndStore(a, g, path, key, err);
  if (!a.op_times.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the op times of this model (", key, ") are not stored in ", path,
        "; MPI ranks do not time ops (each could plan apart): store them with one run on "
        "threads (tessera train ", a.model, " --workers ", a.workers, " --batch ",
        graph::GraphBatch(g), " --threads ", WorkerThreads(a), " --optimizer ", a.optimizer,
        " --steps 1 --op-times remeasure), or pass --op-times model"));
  }
  err << "tessera train: no stored op times for " << key << " in " << path
      << "; the prediction uses the cluster's cost model\n";
  return std::nullopt;
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
  options.first_bucket_bytes = file.first_bucket_bytes;
  options.bucket_bytes = file.bucket_bytes;
  return absl::OkStatus();
}

// The flag that sets what a difference line is about ("workers: ...", "layer fc: ..."). A layer
// one run has and the other lacks is the model's, not the plan's: on the nmt corpus job
// --dropout adds and removes layers; elsewhere it is another model.
std::string FlagOf(const TrainArgs& a, absl::string_view line) {
  if (absl::StartsWith(line, "model:")) return "MODEL";
  if (absl::StartsWith(line, "layer ")) {
    const bool absent =
        absl::StrContains(line, ": checkpoint absent,") || absl::EndsWith(line, "this run absent");
    if (!absent) return "--strategy";
    const bool nmt_corpus = absl::AsciiStrToLower(a.model) == "nmt" && !a.train_file.empty();
    return nmt_corpus ? "--dropout: the model's layers differ" : "MODEL: the model's layers differ";
  }
  return absl::StrCat("--", line.substr(0, line.find(':')));
}

// This run's record: `plan`'s, or without a plan yet only its settings (`graph`'s name and
// batch, the workers, optimizer and seed).
exec::RunRecord ThisRun(const TrainArgs& a, const graph::Graph& graph,
                        costmodel::OptimizerKind optimizer, const partitioner::Plan* plan) {
  const uint64_t seed = static_cast<uint64_t>(a.seed);
  if (plan != nullptr) return exec::RecordOf(*plan, optimizer, seed);
  return {.model = graph.name(), .workers = static_cast<int>(a.workers),
          .batch = graph::GraphBatch(graph), .optimizer = optimizer, .seed = seed};
}

// OK when `now` is the checkpoint's run (compared without layers when `now` has none);
// otherwise FailedPrecondition with a line per difference and the flag behind it.
absl::Status RefuseContradictions(const TrainArgs& a, exec::RunRecord saved,
                                  const exec::RunRecord& now) {
  if (now.strategies.empty()) {
    saved.strategies.clear();
    saved.output_layouts.clear();
  }
  const std::vector<std::string> lines = exec::RunDifferences(saved, now);
  if (lines.empty()) return absl::OkStatus();
  std::vector<std::string> shown;
  for (const std::string& line : lines) {
    shown.push_back(absl::StrCat(line, " (", FlagOf(a, line), ")"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "the checkpoint in ", a.checkpoint, " was written by another run:\n  ",
      absl::StrJoin(shown, "\n  "), "\nto resume it, leave out the options that differ (its plan "
      "is ", a.checkpoint, "/plan.json); to start another run, use another --checkpoint DIR"));
}

}  // namespace

int WorkerThreads(const TrainArgs& a) {
  if (a.threads > 0) return static_cast<int>(a.threads);
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, cores / static_cast<int>(a.workers));
}

absl::StatusOr<std::optional<exec::RunRecord>> ReadCheckpointRecord(const TrainArgs& a) {
  if (a.checkpoint.empty()) return std::nullopt;
  return exec::ReadRunRecord(a.checkpoint);
}

void AdoptCheckpoint(const exec::RunRecord& record, TrainArgs& a) {
  if (!a.Given("--workers")) a.workers = record.workers;
  if (!a.Given("--batch")) a.batch = record.batch;
  if (!a.Given("--optimizer") && record.optimizer.has_value()) {
    a.optimizer = std::string(costmodel::OptimizerName(*record.optimizer));
  }
  if (!a.Given("--seed") && record.seed.has_value()) a.seed = static_cast<int64_t>(*record.seed);
}

absl::StatusOr<partitioner::Plan> PlanTraining(const TrainArgs& a, const graph::Graph& g,
                                               const std::optional<exec::RunRecord>& record,
                                               std::ostream& err) {
  TS_ASSIGN_OR_RETURN(costmodel::OptimizerKind optimizer,
                      costmodel::ParseOptimizerKind(a.optimizer));
  if (record.has_value()) {  // another model, batch, ...: said before its layers fail to plan
    TS_RETURN_IF_ERROR(RefuseContradictions(a, *record, ThisRun(a, g, optimizer, nullptr)));
  }
  TS_ASSIGN_OR_RETURN(std::string cluster, ClusterFor(a, err));
  partitioner::PlanOptions options{.optimizer = optimizer};
  if (record.has_value() && !a.Given("--strategy")) {
    options.planner = partitioner::PlannerKind::kGiven;  // the checkpoint's plan, as it ran
    options.strategies = record->strategies;
    options.output_layouts = record->output_layouts;
    options.first_bucket_bytes = record->first_bucket_bytes;  // 0 (not recorded): chosen
    options.bucket_bytes = record->bucket_bytes;
  } else {
    TS_RETURN_IF_ERROR(SetStrategy(a, options));
  }
  if (a.first_bucket_bytes > 0) options.first_bucket_bytes = a.first_bucket_bytes;
  if (a.bucket_bytes > 0) options.bucket_bytes = a.bucket_bytes;
  // Last: a bad strategy or plan file is reported without timing the ops first.
  TS_ASSIGN_OR_RETURN(std::optional<costmodel::MeasuredOpTimes> op_times,
                      OpTimes(a, g, cluster, err));
  TS_ASSIGN_OR_RETURN(partitioner::Plan plan,
                      exec::PlanForWorkers(g, static_cast<int>(a.workers), cluster, options,
                                           op_times));
  if (record.has_value()) {
    TS_RETURN_IF_ERROR(RefuseContradictions(a, *record, ThisRun(a, g, optimizer, &plan)));
  }
  return plan;
}

}  // namespace tessera::tools
