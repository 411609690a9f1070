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

SquaredNorms LocalSquaredNorms(TrainingProgram& program,
                               const std::map<std::string, ParamShard>* shards) {
  SquaredNorms out;
  for (const TrainingProgram::Parameter& p : program.parameters()) {
    double sum = 0;
    for (float g : p.grad) sum += static_cast<double>(g) * g;
    bool sharded = false;
    if (shards != nullptr) {
      const auto it = shards->find(p.name);
      sharded = it != shards->end() && it->second.sharded;
    }
    (sharded ? out.sharded : out.replicated) += sum;
  }
  return out;
}

}  // namespace

bool GradientsFinite(const std::vector<TrainingProgram::Parameter>& params) {
  // An exponent of all ones is infinity or NaN; OR-ing the test over every value vectorises
  // and, unlike a float sum, does not depend on the order.
  uint32_t any = 0;
  for (const TrainingProgram::Parameter& p : params) {
    const uint32_t* bits = reinterpret_cast<const uint32_t*>(p.grad.data());
    for (size_t i = 0; i < p.grad.size(); ++i) any |= (bits[i] & 0x7f800000u) == 0x7f800000u;
  }
  return any == 0;
}

namespace {

void ScaleGradients(TrainingProgram& program, float scale) {
  for (TrainingProgram::Parameter& p : program.parameters()) {
    for (float& g : p.grad) g *= scale;
  }
}

}  // namespace

absl::StatusOr<StepEnd> EndStep(const StepParts& parts, int64_t step, double lr,
                                const StepEndOptions& options, Optimizer& optimizer) {
  const bool clip = options.clip_norm > 0;
  SquaredNorms local;
  if (clip) local = LocalSquaredNorms(parts.program, parts.shards);
  // A NaN in the data can vanish from the loss (ReLU maps it to 0) while it poisons the
  // gradients: they are checked before the update too (clipping's norm covers them).
  const bool bad_gradients = !clip && !GradientsFinite(parts.program.parameters());
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
      ScaleGradients(parts.program, static_cast<float>(options.clip_norm / end.grad_norm));
    }
  }
  optimizer.Apply(parts.program.parameters(), lr);
  return end;
}

}  // namespace tessera::exec
