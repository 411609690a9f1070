#include "tessera/exec/trainer.h"

#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/checkpoint.h"
#include "tessera/exec/progress.h"
#include "tessera/graph/batch.h"

namespace tessera::exec {
namespace {

absl::Status WithContext(const absl::Status& s, absl::string_view context) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

absl::Status CheckOptions(const TrainerOptions& o) {
  const auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("trainer options: ", what));
  };
  if (o.steps < 0) return bad(absl::StrCat("steps is ", o.steps, "; it must be >= 0"));
  if (o.batch < 0) return bad(absl::StrCat("batch is ", o.batch, "; it must be >= 0"));
  if (!(o.lr >= 0) || !std::isfinite(o.lr)) {
    return bad(absl::StrCat("the learning rate is ", o.lr, "; it must be a finite number >= 0"));
  }
  if (o.warmup_steps < 0 || o.checkpoint_every < 0 || o.log_every < 0) {
    return bad("warmup_steps, checkpoint_every and log_every must be >= 0");
  }
  if (!(o.clip_norm >= 0)) return bad(absl::StrCat("clip_norm is ", o.clip_norm, "; use 0 for none"));
  return absl::OkStatus();
}

// Resumes from the newest valid checkpoint of the directory, or checks that a fresh run may
// write there. Fills the result's resume fields and warnings.
absl::Status Resume(TrainingProgram& program, Optimizer& optimizer, const TrainerOptions& o,
                    TrainResult& result) {
  const std::string& dir = o.checkpoint_dir;
  if (!o.resume) {
    TS_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(dir));
    if (files.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint directory '", dir, "' already holds checkpoints (", files.front().path,
        "); resume from them, or start over in an empty directory"));
  }
  TS_ASSIGN_OR_RETURN(LoadedCheckpoint loaded, LoadLatestValid(dir));
  result.warnings = loaded.warnings;
  if (!loaded.found) return absl::OkStatus();
  const Checkpoint& c = loaded.checkpoint;
  if (c.seed != o.seed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint '", loaded.path, "' was written by a run with seed ", c.seed,
        "; this run has seed ", o.seed, ". Resume with seed ", c.seed,
        ", or train into another checkpoint directory"));
  }
  TS_RETURN_IF_ERROR(WithContext(RestoreCheckpoint(c, program, optimizer),
                                 absl::StrCat("cannot resume from '", loaded.path, "'")));
  if (c.step > o.steps) {
    result.warnings.push_back(absl::StrCat("checkpoint '", loaded.path, "' is at step ", c.step,
                                           ", past this run's ", o.steps, " steps: nothing to run"));
  }
  result.resumed_from_step = c.step;
  result.resumed_from = loaded.path;
  return absl::OkStatus();
}

absl::Status Save(TrainingProgram& program, const Optimizer& optimizer, const TrainerOptions& o,
                  int64_t steps_done, TrainResult& result) {
  TS_ASSIGN_OR_RETURN(result.last_checkpoint,
                      SaveCheckpoint(o.checkpoint_dir,
                                     CaptureCheckpoint(program, optimizer, steps_done, o.seed),
                                     o.keep_checkpoints));
  return absl::OkStatus();
}

// One step: data, forward and backward, clipping, update. Returns the loss.
absl::StatusOr<double> RunOneStep(TrainingProgram& program, DataSource& data, Batch& batch,
                                  Optimizer& optimizer, const TrainerOptions& o, int64_t step,
                                  double lr) {
  TS_RETURN_IF_ERROR(WithContext(data.Next(step, batch), absl::StrCat("data for step ", step)));
  TS_RETURN_IF_ERROR(WithContext(SetInputs(program, batch), absl::StrCat("step ", step)));
  TS_RETURN_IF_ERROR(WithContext(program.RunStep(), absl::StrCat("step ", step)));
  const double loss = program.Loss();
  if (!std::isfinite(loss)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the loss is ", loss, " at step ", step, " (learning rate ", lr,
        "); lower the learning rate, clip gradients (clip_norm) or check the data"));
  }
  // The norm is computed anyway; a NaN in the data can vanish from the loss (ReLU maps it to 0)
  // while it poisons the gradients, so both are checked before the update.
  const double norm = ClipGradientsByGlobalNorm(program.parameters(), o.clip_norm);
  if (!std::isfinite(norm)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the gradients' global norm is ", norm, " at step ", step, " (loss ", loss,
        "); check the data for NaN or infinite values, or lower the learning rate"));
  }
  optimizer.Apply(program.parameters(), lr);
  return loss;
}

// The state of one call of Train while its steps run.
struct Run {
  TrainingProgram& program;
  DataSource& data;
  const TrainerOptions& o;
  Optimizer& optimizer;
  const LearningRateSchedule& schedule;
  ProgressReporter& progress;
  TrainResult& result;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

// Steps from the resumed one to `steps` (or until `stop`), with the periodic checkpoints and
// the last one. Sets the result's step counts and losses.
absl::Status RunSteps(Run& run) {
  const TrainerOptions& o = run.o;
  TrainResult& result = run.result;
  const bool checkpoints = !o.checkpoint_dir.empty();
  Batch batch;
  int64_t step = result.resumed_from_step;
  int64_t saved_at = step;
  for (; step < o.steps; ++step) {
    if (o.stop != nullptr && o.stop->load()) {
      result.stopped = true;
      break;
    }
    TS_ASSIGN_OR_RETURN(const double loss, RunOneStep(run.program, run.data, batch, run.optimizer,
                                                      o, step, run.schedule.At(step)));
    if (result.steps_run++ == 0) result.first_loss = loss;
    result.last_loss = loss;
    run.progress.Update(step + 1, loss, run.Elapsed());
    if (checkpoints && o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0) {
      TS_RETURN_IF_ERROR(Save(run.program, run.optimizer, o, step + 1, result));
      saved_at = step + 1;
    }
  }
  result.final_step = step;
  if (checkpoints && saved_at != step) {
    TS_RETURN_IF_ERROR(Save(run.program, run.optimizer, o, step, result));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainResult> Train(TrainingProgram& program, DataSource& data,
                                  const TrainerOptions& o) {
  TS_RETURN_IF_ERROR(CheckOptions(o));
  Optimizer optimizer(o.optimizer);
  const LearningRateSchedule schedule({.base = o.lr, .warmup_steps = o.warmup_steps,
                                       .total_steps = o.steps, .decay = o.decay,
                                       .final_fraction = o.final_lr_fraction});
  TrainResult result;
  if (!o.checkpoint_dir.empty()) TS_RETURN_IF_ERROR(Resume(program, optimizer, o, result));
  const int64_t batch_size =
      o.batch > 0 ? o.batch : std::max<int64_t>(graph::GraphBatch(program.graph()), 1);
  ProgressReporter progress(o.progress, {.is_terminal = o.progress_is_terminal,
                                         .total_steps = o.steps,
                                         .first_step = result.resumed_from_step,
                                         .batch = batch_size, .log_every = o.log_every,
                                         .loss_window = o.loss_window});
  for (const std::string& w : result.warnings) progress.Note(absl::StrCat("warning: ", w));
  if (!result.resumed_from.empty()) {
    progress.Note(absl::StrCat("resumed from ", result.resumed_from, " at step ",
                               result.resumed_from_step));
  }
  Run run{program, data, o, optimizer, schedule, progress, result};
  const absl::Status status = RunSteps(run);
  progress.Finish();  // ends the terminal line, also before an error is printed
  TS_RETURN_IF_ERROR(status);
  result.seconds = run.Elapsed();
  result.samples_per_s =
      result.seconds > 0 ? static_cast<double>(result.steps_run * batch_size) / result.seconds : 0;
  result.mean_loss_steps = progress.loss().count();
  if (result.mean_loss_steps > 0) result.mean_loss = progress.loss().Mean();
  return result;
}

}  // namespace tessera::exec
