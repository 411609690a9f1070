// The training jobs by model name (train_jobs.h).
#include "tessera/jobs/job_registry.h"

#include "absl/strings/ascii.h"
#include "tessera/jobs/nmt/nmt_job.h"
#include "tessera/jobs/ocr/ocr_job.h"

namespace tessera::jobs {

JobDefaults DefaultsFor(absl::string_view model) {
  const std::string name = absl::AsciiStrToLower(model);
  // The settings with which each job reaches its accuracy goal in the README's time
  // (docs/training-jobs.md).
  if (name == "nmt") return {.steps = 1000, .optimizer = "adam", .lr = 3e-3, .eval_batches = 16};
  if (name == "ocr") return {.steps = 1500, .optimizer = "adam", .lr = 3e-3, .eval_batches = 16};
  return {};
}

std::unique_ptr<TrainingJob> JobFor(absl::string_view model, uint64_t seed) {
  const std::string name = absl::AsciiStrToLower(model);
  if (name == "nmt") return nmt::MakeNmtJob({.seed = seed});
  if (name == "ocr") return ocr::MakeOcrJob({.seed = seed});
  return nullptr;
}

nlohmann::json MetricsJson(const Evaluation& evaluation, const RunFacts& facts) {
  nlohmann::json j = nlohmann::json::object();
  j["model"] = facts.model;
  for (const auto& [name, value] : evaluation.metrics) j[name] = value;
  j["steps"] = facts.steps;
  j["seconds"] = facts.seconds;
  j["eval_seconds"] = facts.eval_seconds;
  j["workers"] = facts.workers;
  return j;
}

}  // namespace tessera::jobs
