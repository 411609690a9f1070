// The training records and their JSON-lines log (training_log.h).
#include "tessera/exec/training_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tessera::exec {
namespace {

// JSON has no NaN or infinity: null stands for them.
nlohmann::ordered_json Number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json RunJson(const RunInfo& run) {
  return {{"run",
           {{"model", run.model}, {"workers", run.workers}, {"global_batch", run.global_batch},
            {"steps", run.steps}, {"first_step", run.first_step},
            {"eval_every", run.eval_every}, {"eval_batches", run.eval_batches}}}};
}

nlohmann::ordered_json StepJson(const StepRecord& s) {
  return {{"step", s.step}, {"loss", Number(s.loss)}, {"lr", Number(s.lr)},
          {"samples_per_s", Number(s.samples_per_s)}, {"time_s", Number(s.time_s)}};
}

nlohmann::ordered_json EvalJson(const EvalRecord& e) {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& [name, value] : e.metrics) metrics[name] = Number(value);
  return {{"step", e.step}, {"eval", std::move(metrics)}, {"eval_s", Number(e.eval_s)}};
}

absl::StatusOr<std::unique_ptr<TrainingLog>> TrainingLog::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open the log file ", path, " for appending: ", std::strerror(errno),
                     "; pass --log a path in a folder you can write"));
  }
  return std::unique_ptr<TrainingLog>(new TrainingLog(path, file));
}

TrainingLog::~TrainingLog() { std::fclose(file_); }

void TrainingLog::Write(const nlohmann::ordered_json& record) {
  // The replacement handler: metric names are the job's, but a stray byte must not throw.
  const std::string line =
      record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok()) return;
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    status_ = absl::DataLossError(absl::StrCat("writing the log file ", path_, " failed: ",
                                               std::strerror(errno), "; its later lines are lost"));
  }
}

absl::Status TrainingLog::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace tessera::exec
