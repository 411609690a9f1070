// The training loop of one worker: batches from a data source, the step, clipping, the optimizer
// with a scheduled learning rate, progress, and checkpoints with resume.
//
//   TS_ASSIGN_OR_RETURN(auto program, TrainingProgram::Create(graph, {.seed = 1}));
//   RandomDataSource data(program->graph(), {.seed = 1});
//   TS_ASSIGN_OR_RETURN(TrainResult r, Train(*program, data, {
//       .steps = 1000, .lr = 1e-3, .decay = Decay::kCosine, .warmup_steps = 50,
//       .optimizer = {.kind = OptimizerKind::kAdam}, .clip_norm = 1.0,
//       .checkpoint_dir = "runs/a", .checkpoint_every = 100, .seed = 1,
//       .progress = &std::cerr, .progress_is_terminal = isatty(fileno(stderr)) != 0}));
//
// Step s (0-based) runs: data.Next(s) -> SetInputs -> RunStep -> clip by global norm ->
// Optimizer::Apply with schedule.At(s) -> progress; after step s a checkpoint is saved when
// (s + 1) is a multiple of `checkpoint_every`, and always after the last step (and when `stop`
// is raised). With `resume`, the run starts from the newest valid checkpoint of
// `checkpoint_dir` (its parameters, optimizer state and step) and runs up to `steps`, so a run
// killed at any point and resumed ends with the parameters of an uninterrupted run, bit for bit
// (given a deterministic data source and a model without Dropout: see docs/training.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"

namespace tessera::exec {

struct TrainerOptions {
  int64_t steps = 100;            // steps of the whole run; a resumed run continues up to it
  int64_t batch = 0;              // samples per step, for samples/s (0: the graph's batch)
  double lr = 0.01;               // base learning rate
  Decay decay = Decay::kConstant; // after the warm-up, down to final_lr_fraction * lr at `steps`
  int64_t warmup_steps = 0;
  double final_lr_fraction = 0;
  OptimizerOptions optimizer;
  double clip_norm = 0;           // clip gradients to this global L2 norm (0: no clipping)
  std::string checkpoint_dir;     // empty: no checkpoints
  int64_t checkpoint_every = 0;   // 0: only at the end
  int keep_checkpoints = 3;
  bool resume = true;             // false: `checkpoint_dir` must hold no checkpoint
  uint64_t seed = 0;              // the run's seed: saved in checkpoints, checked on resume
  std::ostream* progress = nullptr;
  bool progress_is_terminal = false;
  int64_t log_every = 10;         // plain progress lines
  int64_t loss_window = 20;       // running mean of the loss (progress, TrainResult)
  const std::atomic<bool>* stop = nullptr;  // raised (e.g. by SIGINT): checkpoint and return
};

struct TrainResult {
  int64_t steps_run = 0;          // by this call
  int64_t final_step = 0;         // steps done in total
  int64_t resumed_from_step = 0;  // 0 for a fresh run
  std::string resumed_from;       // the checkpoint's path; empty for a fresh run
  double first_loss = std::numeric_limits<double>::quiet_NaN();  // of this call's first step
  double last_loss = std::numeric_limits<double>::quiet_NaN();
  double mean_loss = std::numeric_limits<double>::quiet_NaN();   // of the last loss_window steps
  int64_t mean_loss_steps = 0;
  double seconds = 0;
  double samples_per_s = 0;
  bool stopped = false;           // `stop` was raised
  std::string last_checkpoint;    // empty when none was written
  std::vector<std::string> warnings;  // skipped checkpoints, resume caveats
};

// Errors: InvalidArgument for bad options, or a loss or gradient norm that is not finite (naming
// the step; the parameters are left as they were before that step's update); what the data source, the program or a checkpoint returns, with the step
// or the checkpoint's path; FailedPrecondition when resuming from a checkpoint of another seed
// or optimizer, or when `resume` is off and `checkpoint_dir` already holds checkpoints.
absl::StatusOr<TrainResult> Train(TrainingProgram& program, DataSource& data,
                                  const TrainerOptions& options);

}  // namespace tessera::exec
