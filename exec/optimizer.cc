#include "tessera/exec/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace tessera::exec {

absl::StatusOr<OptimizerKind> ParseOptimizerKind(absl::string_view name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "momentum") return OptimizerKind::kMomentum;
  if (name == "adam") return OptimizerKind::kAdam;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", name, "'; use sgd, momentum or adam"));
}

void Optimizer::Apply(std::vector<TrainingProgram::Parameter>& params, double lr) {
  ++updates_;
  const double wd = options_.weight_decay;
  const double b1 = options_.beta1, b2 = options_.beta2;
  const double c1 = 1 - std::pow(b1, static_cast<double>(updates_));
  const double c2 = 1 - std::pow(b2, static_cast<double>(updates_));
  for (TrainingProgram::Parameter& p : params) {
    const size_t n = p.value.size();
    float* w = p.value.data();
    const float* g = p.grad.data();
    if (options_.kind == OptimizerKind::kSgd) {
      for (size_t i = 0; i < n; ++i) w[i] -= static_cast<float>(lr * (g[i] + wd * w[i]));
      continue;
    }
    State& s = state_[p.name];
    const size_t slots = options_.kind == OptimizerKind::kMomentum ? 1 : 2;
    if (s.slots.size() != slots) s.slots.assign(slots, std::vector<float>(n, 0.f));
    if (options_.kind == OptimizerKind::kMomentum) {
      float* v = s.slots[0].data();
      for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>(options_.momentum * v[i] + g[i] + wd * w[i]);
        w[i] -= static_cast<float>(lr * v[i]);
      }
      continue;
    }
    float* m = s.slots[0].data();
    float* v = s.slots[1].data();
    for (size_t i = 0; i < n; ++i) {
      m[i] = static_cast<float>(b1 * m[i] + (1 - b1) * g[i]);
      v[i] = static_cast<float>(b2 * v[i] + (1 - b2) * g[i] * g[i]);
      const double step = (m[i] / c1) / (std::sqrt(v[i] / c2) + options_.epsilon);
      w[i] -= static_cast<float>(lr * step + lr * wd * w[i]);
    }
  }
}

absl::Status Optimizer::SetState(std::map<std::string, State> state, int64_t updates,
                                 const std::vector<TrainingProgram::Parameter>& params) {
  for (const TrainingProgram::Parameter& p : params) {
    auto it = state.find(p.name);
    if (it == state.end()) continue;
    for (const std::vector<float>& slot : it->second.slots) {
      if (slot.size() != p.value.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "optimizer state of '", p.name, "' has ", slot.size(), " values; the parameter has ",
            p.value.size()));
      }
    }
  }
  state_ = std::move(state);
  updates_ = updates;
  return absl::OkStatus();
}

double LearningRateSchedule::At(int64_t step) const {
  const ScheduleOptions& o = options_;
  if (o.warmup_steps > 0 && step < o.warmup_steps) {
    return o.base * static_cast<double>(step + 1) / static_cast<double>(o.warmup_steps);
  }
  if (o.decay == Decay::kConstant || o.total_steps <= o.warmup_steps) return o.base;
  const double span = static_cast<double>(o.total_steps - o.warmup_steps);
  const double t = std::clamp(static_cast<double>(step - o.warmup_steps) / span, 0.0, 1.0);
  const double floor = o.final_fraction * o.base;
  if (o.decay == Decay::kLinear) return o.base - (o.base - floor) * t;
  return floor + (o.base - floor) * 0.5 * (1 + std::cos(std::numbers::pi * t));
}

double ClipGradientsByGlobalNorm(std::vector<TrainingProgram::Parameter>& params,
                                 double max_norm) {
  double sum = 0;
  for (const TrainingProgram::Parameter& p : params) {
    for (float g : p.grad) sum += static_cast<double>(g) * g;
  }
  const double norm = std::sqrt(sum);
  if (max_norm > 0 && norm > max_norm) {
    const float scale = static_cast<float>(max_norm / norm);
    for (TrainingProgram::Parameter& p : params) {
      for (float& g : p.grad) g *= scale;
    }
  }
  return norm;
}

}  // namespace tessera::exec
