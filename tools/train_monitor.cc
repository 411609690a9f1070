// Evaluations during training, the log and the HTML report of `tessera train`
// (train_monitor.h).
#include "tessera/tools/train_monitor.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/training_html.h"
#include "tessera/graph/batch.h"

namespace tessera::tools {
namespace {

// OK when `path` names a file that can be written (an existing one, or a new one in an existing
// folder that can be written), else InvalidArgument naming `flag`, the file and what to do.
absl::Status CheckWritable(const std::string& path, absl::string_view flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": ", why,
                                                   "; pass a file in a folder you can write"));
  };
  if (path.empty()) return refuse("the path is empty");
  if (fs::is_directory(p, ec)) return refuse("is a folder");
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) return refuse(absl::StrCat("no folder ", folder.string()));
  if (access(folder.c_str(), W_OK) != 0) {
    return refuse(absl::StrCat("the folder ", folder.string(), " cannot be written"));
  }
  if (fs::exists(p, ec) && access(p.c_str(), W_OK) != 0) return refuse("cannot be written");
  return absl::OkStatus();
}

}  // namespace

void AddMonitorOptions(ArgParser& p, TrainArgs& a) {
  p.AddInt("--eval-every", "N",
           "nmt/ocr: also evaluate on the --eval-batches held-out batches every N steps while "
           "training (0: at the end only)",
           &a.eval_every, 0);
  p.AddString("--log", "FILE",
              "append a JSON line per step and per evaluation to FILE as training goes",
              &a.log);
  p.AddString("--html", "FILE",
              "write an HTML report at the end: loss, learning rate, throughput and held-out "
              "metrics over the steps",
              &a.html);
}

std::string MetricsText(const std::vector<std::pair<std::string, double>>& metrics) {
  std::string text;
  for (const auto& [name, value] : metrics) absl::StrAppend(&text, "  ", name, " ", value);
  return text;
}

absl::StatusOr<std::unique_ptr<TrainMonitor>> TrainMonitor::Start(const TrainArgs& a,
                                                                  bool rank0) {
  if (rank0 && !a.log.empty()) TS_RETURN_IF_ERROR(CheckWritable(a.log, "--log"));
  if (rank0 && !a.html.empty()) TS_RETURN_IF_ERROR(CheckWritable(a.html, "--html"));
  return std::unique_ptr<TrainMonitor>(new TrainMonitor(a, rank0));
}

absl::Status TrainMonitor::Attach(const TrainArgs& a, exec::HybridRunOptions& options,
                                  const jobs::TrainingJob* job, const graph::Graph& graph) {
  args_ = a;
  if (args_.eval_every > 0 && args_.eval_batches == 0) {
    return absl::InvalidArgumentError(
        "--eval-every evaluates on the --eval-batches held-out batches, and --eval-batches 0 "
        "turns evaluation off; pass --eval-batches N (a few keep each evaluation short)");
  }
  history_.run = {.model = args_.model, .workers = static_cast<int>(args_.workers),
                  .global_batch = graph::GraphBatch(graph), .steps = args_.steps,
                  .eval_every = job != nullptr ? args_.eval_every : 0,
                  .eval_batches = job != nullptr ? args_.eval_batches : 0};
  if (job != nullptr && args_.eval_every > 0) {
    // Every rank takes part in gathering the model; rank 0 evaluates it.
    options.worker.eval_every = args_.eval_every;
    options.worker.on_eval = [this, job, &graph](
                                 const exec::WholeModel& m) -> absl::StatusOr<std::string> {
      if (!rank0_) return std::string();
      return EvaluateDuringTraining(*job, graph, m);
    };
  }
  if (!rank0_) return absl::OkStatus();
  if (!args_.log.empty()) {
    TS_ASSIGN_OR_RETURN(log_, exec::TrainingLog::Open(args_.log));
  }
  if (log_ != nullptr || !args_.html.empty()) {
    options.worker.on_step = [this](const exec::StepRecord& s) { AddStep(s); };
  }
  return absl::OkStatus();
}

void TrainMonitor::AddStep(const exec::StepRecord& step) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!run_logged_) {  // the first step of this run says where it started (a resumed run)
    history_.run.first_step = step.step - 1;
    if (log_ != nullptr) log_->Write(exec::RunJson(history_.run));
    run_logged_ = true;
  }
  history_.steps.push_back(step);
  if (log_ != nullptr) log_->Write(exec::StepJson(step));
}

void TrainMonitor::AddEval(exec::EvalRecord eval) {
  if (!rank0_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (log_ != nullptr) log_->Write(exec::EvalJson(eval));
  history_.evals.push_back(std::move(eval));
}

absl::StatusOr<std::string> TrainMonitor::EvaluateDuringTraining(const jobs::TrainingJob& job,
                                                                 const graph::Graph& graph,
                                                                 const exec::WholeModel& m) {
  const auto start = std::chrono::steady_clock::now();
  TS_ASSIGN_OR_RETURN(const exec::Device device, exec::ParseDevice(args_.device));
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  TS_ASSIGN_OR_RETURN(jobs::Evaluation e,
                      job.Evaluate({&graph, &m.parameters, &m.buffers},
                                   {.batches = args_.eval_batches, .threads = cores,
                                    .device = device, .tf32 = args_.tf32, .show = 0}));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  AddEval({.step = m.step, .metrics = e.metrics, .eval_s = seconds});
  if (args_.quiet) return std::string();
  return absl::StrCat("step ", m.step, "  held-out", MetricsText(e.metrics),
                      absl::StrFormat("  (%.1f s)", seconds));
}

absl::Status TrainMonitor::Finish(std::ostream& err) {
  if (!rank0_) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (log_ != nullptr && !log_->status().ok()) {
    err << "tessera train: warning: " << log_->status().message() << "\n";
  }
  if (args_.html.empty()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(base::WriteFileAtomically(args_.html, exec::TrainingHtml(history_),
                                               "HTML training report"));
  err << "tessera train: wrote " << args_.html << "\n";
  return absl::OkStatus();
}

}  // namespace tessera::tools
