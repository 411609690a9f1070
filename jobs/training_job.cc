// The training-job interface and the evaluation program (training_job.h).
#include "tessera/jobs/training_job.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::jobs {

TrainingJob::~TrainingJob() = default;

bool TrainingJob::BuildsModel() const { return false; }

absl::StatusOr<graph::Graph> TrainingJob::Model(int64_t) const {
  return absl::UnimplementedError("this job trains the model it is given");
}

absl::StatusOr<std::vector<graph::Graph>> TrainingJob::ModelVariants(const graph::Graph&) const {
  return std::vector<graph::Graph>{};
}

absl::StatusOr<std::unique_ptr<exec::TrainingProgram>> EvaluationProgram(
    const graph::Graph& graph, const TrainedModel& model, const EvalOptions& options) {
  if (model.parameters == nullptr) {
    return absl::InvalidArgumentError("EvaluationProgram: the trained model has no parameters");
  }
  exec::ProgramOptions po{.threads = options.threads};
  if (options.device != exec::Device::kCpu) {
    TS_ASSIGN_OR_RETURN(po.backend, exec::MakeBackend({.device = options.device,
                                                       .threads = options.threads,
                                                       .tf32 = options.tf32}));
  }
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      exec::TrainingProgram::Create(graph, po));
  for (exec::TrainingProgram::Parameter& p : program->parameters()) {
    auto it = model.parameters->find(p.name);
    if (it == model.parameters->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the trained parameters of model '", graph.name(), "' lack '", p.name, "'"));
    }
    TS_RETURN_IF_ERROR(program->SetPersistentValue(p.name, it->second));
  }
  if (model.buffers != nullptr) {
    for (const auto& [name, values] : *model.buffers) {
      if (program->PersistentValue(name).empty()) continue;  // not in this graph
      TS_RETURN_IF_ERROR(program->SetPersistentValue(name, values));
    }
  }
  return program;
}

}  // namespace tessera::jobs
