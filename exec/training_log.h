// What a training run records as it goes: a StepRecord per step (HybridOptions::on_step) and an
// EvalRecord per evaluation on held-out data, kept in a TrainingHistory (the HTML report,
// training_html.h) and appended to a JSON-lines log (TrainingLog) that a user can follow with
// `tail -f`: one JSON object per line, each line flushed as it is written (docs/training.md,
// "The log and the report"; `tessera train --log FILE`).
//
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<TrainingLog> log, TrainingLog::Open("run.jsonl"));
//   log->Write(RunJson({.model = "nmt", .workers = 2, .global_batch = 32, .steps = 100}));
//   options.worker.on_step = [&](const StepRecord& s) { log->Write(StepJson(s)); };
//   ...                                                // TrainHybrid
//   if (!log->status().ok()) ...                       // the first write that failed
//
// Lines: {"run": {"model", "workers", "global_batch", "steps", "first_step", "eval_every",
// "eval_batches"}} when a run starts, {"step", "loss", "lr", "samples_per_s", "time_s"} per step,
// {"step", "eval": {metric: value, ...}, "eval_s"} per evaluation. A value that is not finite
// (a diverged loss) is written as null.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::exec {

struct StepRecord {
  int64_t step = 0;          // steps done, of the whole run (1 after its first step)
  double loss = 0;           // this step's loss on the global batch
  double lr = 0;             // the learning rate of its update
  // The global batch over the step's seconds since the previous step ended (its data read
  // included, evaluations not).
  double samples_per_s = 0;
  double time_s = 0;         // seconds from this run's start to the step's end
};

struct EvalRecord {
  int64_t step = 0;          // steps done when the parameters were evaluated
  std::vector<std::pair<std::string, double>> metrics;  // in the job's order
  double eval_s = 0;         // seconds the evaluation took
};

struct RunInfo {
  std::string model;
  int workers = 1;
  int64_t global_batch = 0;
  int64_t steps = 0;         // of the whole run
  int64_t first_step = 0;    // steps already done (a resumed run)
  int64_t eval_every = 0;    // 0: evaluated at the end only
  int64_t eval_batches = 0;  // held-out batches of each evaluation
};

struct TrainingHistory {
  RunInfo run;
  std::vector<StepRecord> steps;
  std::vector<EvalRecord> evals;
};

nlohmann::ordered_json RunJson(const RunInfo& run);
nlohmann::ordered_json StepJson(const StepRecord& step);
nlohmann::ordered_json EvalJson(const EvalRecord& eval);

// A JSON-lines file written as training goes; safe to call from several threads.
class TrainingLog {
 public:
  // `path` opened for appending: created when missing, an earlier run's lines kept. An error
  // names the path, the reason and what to do.
  static absl::StatusOr<std::unique_ptr<TrainingLog>> Open(const std::string& path);
  ~TrainingLog();
  TrainingLog(const TrainingLog&) = delete;
  TrainingLog& operator=(const TrainingLog&) = delete;

  // One line, flushed. After a failed write nothing more is written and status() says why.
  void Write(const nlohmann::ordered_json& record);
  absl::Status status() const;
  const std::string& path() const { return path_; }

 private:
  TrainingLog(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

  const std::string path_;
  mutable std::mutex mu_;
  std::FILE* file_;
  absl::Status status_;
};

}  // namespace tessera::exec
