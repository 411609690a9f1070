// The end of a training step on every rank (step_end.h).
#include "tessera/exec/step_end.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::exec {
namespace {

struct SquaredNorms {
  double replicated = 0;  // the same on every rank
  double sharded = 0;     // this rank's slices
};

std::vector<absl::Span<const float>> Gradients(
    const std::vector<TrainingProgram::Parameter>& params) {
  std::vector<absl::Span<const float>> out;
  out.reserve(params.size());
  for (const TrainingProgram::Parameter& p : params) out.push_back(p.grad);
  return out;
}

// The gradients' squared norms (when `clip`) and finiteness, in one pass on the back-end.
absl::StatusOr<SquaredNorms> InspectGradients(TrainingProgram& program,
                                              const std::map<std::string, ParamShard>* shards,
                                              bool clip, bool& finite) {
  const std::vector<TrainingProgram::Parameter>& params = program.parameters();
  TS_ASSIGN_OR_RETURN(ArrayStats stats, program.backend().Inspect(Gradients(params), clip));
  finite = stats.finite;
  SquaredNorms out;
  for (size_t i = 0; clip && i < params.size(); ++i) {
    bool sharded = false;
    if (shards != nullptr) {
      const auto it = shards->find(params[i].name);
      sharded = it != shards->end() && it->second.sharded;
    }
    (sharded ? out.sharded : out.replicated) += stats.squares[i];
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> GradientsFinite(Backend& backend,
                                     const std::vector<TrainingProgram::Parameter>& params) {
  TS_ASSIGN_OR_RETURN(ArrayStats stats, backend.Inspect(Gradients(params), /*squares=*/false));
  return stats.finite;
}

absl::StatusOr<StepEnd> EndStep(const StepParts& parts, int64_t step, double lr,
                                const StepEndOptions& options, Optimizer& optimizer) {
  const bool clip = options.clip_norm > 0;
  // A NaN in the data can vanish from the loss (ReLU maps it to 0) while it poisons the
  // gradients: they are checked before the update too.
  bool finite = true;
  TS_ASSIGN_OR_RETURN(const SquaredNorms local,
                      InspectGradients(parts.program, parts.shards, clip, finite));
  const bool bad_gradients = !finite;
  // One all-reduce: this rank's share of the loss, its slices' squared norm, whether its
  // gradients hold non-finite values, its stop request.
  const bool stop_here = options.stop != nullptr && options.stop->load();
  std::vector<float> agreed = {parts.program.Loss() * parts.loss_scale,
                               static_cast<float>(local.sharded), bad_gradients ? 1.f : 0.f,
                               stop_here ? 1.f : 0.f};
  TS_RETURN_IF_ERROR(parts.comm.AllReduce(agreed, comm::ReduceOp::kSum));
  StepEnd end{.loss = agreed[0], .stop = agreed[3] > 0};
  if (!std::isfinite(end.loss)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the loss is ", end.loss, " at step ", step, " (learning rate ", lr,
        "); lower the learning rate, clip gradients by their global norm, or check the data"));
  }
  if (clip) end.grad_norm = std::sqrt(local.replicated + static_cast<double>(agreed[1]));
  if (!std::isfinite(end.grad_norm) || agreed[2] > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the gradients hold NaN or infinite values at step ", step, " (loss ", end.loss,
        clip ? absl::StrCat(", global norm ", end.grad_norm) : "",
        "); check the data for NaN or infinite values, or lower the learning rate"));
  }
  if (clip) {
    if (end.grad_norm > options.clip_norm) {
      const float scale = static_cast<float>(options.clip_norm / end.grad_norm);
      for (TrainingProgram::Parameter& p : parts.program.parameters()) {
        TS_RETURN_IF_ERROR(parts.program.backend().Scale(p.grad, scale));
      }
    }
  }
  TS_RETURN_IF_ERROR(optimizer.Apply(parts.program.parameters(), lr));
  return end;
}

}  // namespace tessera::exec
