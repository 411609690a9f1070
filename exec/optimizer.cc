#include "tessera/exec/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::exec {

UpdateRule Optimizer::Rule(const OptimizerOptions& o, double lr, int64_t t) {
  // Adam's bias corrections, in double, as torch.optim computes them.
  const double c1 = 1 - std::pow(o.beta1, static_cast<double>(t));
  const double c2 = 1 - std::pow(o.beta2, static_cast<double>(t));
  return {.kind = o.kind,
          .lr = static_cast<float>(lr),
          .weight_decay = static_cast<float>(o.weight_decay),
          .momentum = static_cast<float>(o.momentum),
          .epsilon = static_cast<float>(o.epsilon),
          .beta1 = static_cast<float>(o.beta1),
          .beta2 = static_cast<float>(o.beta2),
          .one_minus_beta1 = static_cast<float>(1 - o.beta1),
          .one_minus_beta2 = static_cast<float>(1 - o.beta2),
          .step_size = static_cast<float>(lr / c1),
          .inv_sqrt_c2 = static_cast<float>(1 / std::sqrt(c2)),
          .decay = static_cast<float>(lr * o.weight_decay)};
}

absl::StatusOr<Optimizer::Slots*> Optimizer::SlotsOf(const std::string& name, size_t size) {
  const int count = Rule(options_, 0, 1).slots();
  Slots& s = state_[name];
  if (static_cast<int>(s.arrays.size()) == count && s.size == size) return &s;
  s = Slots{.size = size};
  for (int k = 0; k < count; ++k) {
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation a,
                        memory::DeviceAllocation::Create(
                            backend_.memory(), std::max<int64_t>(4, size * sizeof(float)), 64));
    TS_RETURN_IF_ERROR(backend_.Fill({static_cast<float*>(a.data()), size}, 0.f));
    s.arrays.push_back(std::move(a));
  }
  return &s;
}

absl::Status Optimizer::Apply(std::vector<TrainingProgram::Parameter>& params, double lr) {
  ++updates_;
  const UpdateRule rule = Rule(options_, lr, updates_);
  std::vector<float*> slots;
  for (TrainingProgram::Parameter& p : params) {
    slots.clear();
    if (rule.slots() > 0) {
      TS_ASSIGN_OR_RETURN(Slots * s, SlotsOf(p.name, p.value.size()));
      for (memory::DeviceAllocation& a : s->arrays) slots.push_back(static_cast<float*>(a.data()));
    }
    TS_RETURN_IF_ERROR(backend_.Update(rule, p.value, p.grad, slots));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, Optimizer::State>> Optimizer::ReadState() const {
  std::map<std::string, State> out;
  for (const auto& [name, s] : state_) {
    State& host = out[name];
    for (const memory::DeviceAllocation& a : s.arrays) {
      TS_ASSIGN_OR_RETURN(std::vector<float> v,
                          ReadFloats(backend_, {static_cast<const float*>(a.data()), s.size}));
      host.slots.push_back(std::move(v));
    }
  }
  return out;
}

absl::Status Optimizer::SetState(const std::map<std::string, State>& state, int64_t updates,
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
  state_.clear();
  for (const auto& [name, host] : state) {
    Slots& s = state_[name];
    s.size = host.slots.empty() ? 0 : host.slots[0].size();
    for (const std::vector<float>& slot : host.slots) {
      if (slot.size() != s.size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "optimizer state of '", name, "' has vectors of ", s.size, " and ", slot.size(),
            " values; they must match"));
      }
      TS_ASSIGN_OR_RETURN(memory::DeviceAllocation a,
                          memory::DeviceAllocation::Create(
                              backend_.memory(), std::max<int64_t>(4, s.size * sizeof(float)), 64));
      TS_RETURN_IF_ERROR(WriteFloats(backend_, {static_cast<float*>(a.data()), s.size}, slot));
      s.arrays.push_back(std::move(a));
    }
  }
  updates_ = updates;
  return absl::OkStatus();
}

absl::string_view DecayName(Decay decay) {
  switch (decay) {
    case Decay::kConstant: return "constant";
    case Decay::kLinear: return "linear";
    case Decay::kCosine: return "cosine";
  }
  return "unknown";
}

absl::StatusOr<Decay> ParseDecay(absl::string_view name) {
  for (Decay d : {Decay::kConstant, Decay::kLinear, Decay::kCosine}) {
    if (DecayName(d) == name) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown learning-rate schedule '", name,
                                                 "'; expected constant, linear or cosine"));
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

}  // namespace tessera::exec
