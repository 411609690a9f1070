// What runs around a rank's steps in RunHybridWorker (hybrid_worker.cc): rank 0's progress and
// step records, the evaluations during training, and the gathering of the whole model they and
// the run's end share. Internal to exec.
//
//   RunMonitor monitor(options, rank_plan.rank, rank_plan.global_batch, first_step);
//   for (...) {
//     ...
//     TS_RETURN_IF_ERROR(monitor.AfterStep(step, loss, lr, stopping, rank_plan, program, act));
//   }
//   monitor.Finish();
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/hybrid_worker.h"
#include "tessera/exec/progress.h"
#include "tessera/exec/rank_plan.h"
#include "tessera/exec/training_program.h"

namespace tessera::exec::internal {

// Every rank calls it: rank 0 gets every parameter whole (model-parallel shards all-gathered
// along their axis), the others an empty map.
absl::StatusOr<std::map<std::string, std::vector<float>>> GatherParameters(
    const RankPlan& r, TrainingProgram& program, comm::Communicator& comm);

// The program's floating constants by name (BatchNormalization's running statistics).
std::map<std::string, std::vector<float>> FloatingConstants(const TrainingProgram& program);

// Every rank calls it. Rank 0 runs `work` on a thread of its own and, until it ends, broadcasts
// "still running" every quarter of the communicator's timeout, then "done"; the other ranks
// wait in those broadcasts, so none waits past the timeout however long `work` takes. Rank 0
// gets what `work` returned and returns an error at once (the others' waits fail as it
// leaves); the others get an empty string.
absl::StatusOr<std::string> RunOnRank0WhileOthersWait(
    comm::Communicator& comm, const std::function<absl::StatusOr<std::string>()>& work);

class RunMonitor {
 public:
  // Starts the run's clock.
  RunMonitor(const HybridOptions& options, int rank, int64_t global_batch, int64_t first_step);

  // After step `step` (from 0) ended with the global `loss` at learning rate `lr`; every rank
  // calls it. Rank 0 updates the progress and calls HybridOptions::on_step; after every
  // eval_every steps but the last (and unless the run is stopping) every rank takes part in
  // the evaluation (HybridOptions::on_eval).
  absl::Status AfterStep(int64_t step, double loss, double lr, bool stopping, const RankPlan& r,
                         TrainingProgram& program, comm::Communicator& act);
  // Ends the progress output.
  void Finish() { progress_.Finish(); }

 private:
  using Clock = std::chrono::steady_clock;
  absl::Status Evaluate(int64_t steps_done, const RankPlan& r, TrainingProgram& program,
                        comm::Communicator& act);

  const HybridOptions& options_;
  const int rank_;
  const int64_t global_batch_;
  ProgressReporter progress_;
  const Clock::time_point start_;
  Clock::time_point step_start_;
  double eval_s_ = 0;  // spent evaluating, left out of the progress line's throughput
};

}  // namespace tessera::exec::internal
