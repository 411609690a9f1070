// What `tessera train` shows of a run while it goes and writes when it ends: evaluations on
// the held-out data every N steps (--eval-every), a JSON-lines log (--log FILE) and an HTML
// report (--html FILE), on rank 0 (exec/training_log.h, exec/training_html.h,
// docs/training.md "The log and the report").
//
//   AddMonitorOptions(parser, args);
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<TrainMonitor> monitor, TrainMonitor::Start(args, rank0));
//   ...                                                   // the job, the model, the plan
//   TS_RETURN_IF_ERROR(monitor->Attach(args, options, job.get(), graph));
//   ...                                                   // TrainHybrid, the final evaluation
//   monitor->AddEval({.step = steps, .metrics = e.metrics, .eval_s = s});
//   TS_RETURN_IF_ERROR(monitor->Finish(err));
#pragma once

#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/training_log.h"
#include "tessera/jobs/training_job.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/train_args.h"

namespace tessera::tools {

void AddMonitorOptions(ArgParser& p, TrainArgs& a);

// "  token_accuracy 0.91  sacrebleu 31.2": the metrics as the command prints them.
std::string MetricsText(const std::vector<std::pair<std::string, double>>& metrics);

class TrainMonitor {
 public:
  // Checks on rank 0 that --log and --html can be written (InvalidArgument naming the file and
  // what to do), before anything slow runs; ranks other than 0 write nothing.
  static absl::StatusOr<std::unique_ptr<TrainMonitor>> Start(const TrainArgs& a, bool rank0);

  // With `a` as the defaults and a resumed checkpoint completed it: opens the log and sets the
  // runtime's hooks, the step records and, with --eval-every, the evaluations of `job` (the
  // model `graph`, which must outlive training). InvalidArgument for --eval-every without
  // held-out batches.
  absl::Status Attach(const TrainArgs& a, exec::HybridRunOptions& options,
                      const jobs::TrainingJob* job, const graph::Graph& graph);
  // An evaluation made outside training (the final one).
  void AddEval(exec::EvalRecord eval);
  // Writes --html (atomically) from the steps and evaluations so far; a warning on `err` when
  // the log lost lines.
  absl::Status Finish(std::ostream& err);

 private:
  explicit TrainMonitor(const TrainArgs& a, bool rank0) : args_(a), rank0_(rank0) {}
  void AddStep(const exec::StepRecord& step);
  absl::StatusOr<std::string> EvaluateDuringTraining(const jobs::TrainingJob& job,
                                                     const graph::Graph& graph,
                                                     const exec::WholeModel& model);

  TrainArgs args_;
  const bool rank0_;
  std::unique_ptr<exec::TrainingLog> log_;
  std::mutex mu_;  // the step records come from rank 0's thread, evaluations from another
  exec::TrainingHistory history_;
  bool run_logged_ = false;
};

}  // namespace tessera::tools
