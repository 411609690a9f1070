// The training jobs `tessera train` runs by model name: "nmt" and "ocr" train on their tasks'
// data (jobs/nmt, jobs/ocr) and are evaluated on the held-out split; every other model
// trains on random data and has no job.
//
//   const JobDefaults d = DefaultsFor("nmt");             // steps, optimizer, lr, eval batches
//   std::unique_ptr<TrainingJob> job = JobFor("nmt", /*seed=*/1);
//   nlohmann::json m = MetricsJson(evaluation, {.steps = 300, .seconds = 95.2, .workers = 2});
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tessera/jobs/training_job.h"

namespace tessera::jobs {

// What `tessera train MODEL` uses for the options the user leaves out.
struct JobDefaults {
  int64_t steps = 20;
  std::string optimizer = "sgd";
  double lr = 0.01;
  int64_t eval_batches = 0;
};

// The defaults of the job called `model` (case-insensitive), or those of a model trained on
// random data when it is not a job.
JobDefaults DefaultsFor(absl::string_view model);

// The job called `model` with its data drawn from `seed`; null when `model` is not a job.
std::unique_ptr<TrainingJob> JobFor(absl::string_view model, uint64_t seed);

struct RunFacts {
  std::string model;
  int64_t steps = 0;       // steps trained in total
  double seconds = 0;      // training wall time of this run
  double eval_seconds = 0;
  int workers = 0;
};

// {"model", <metrics...>, "steps", "seconds", "eval_seconds", "workers"}.
nlohmann::json MetricsJson(const Evaluation& evaluation, const RunFacts& facts);

}  // namespace tessera::jobs
