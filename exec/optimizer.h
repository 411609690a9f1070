// Optimizers and learning-rate schedules for the training loop (exec/hybrid_worker.h; gradient
// clipping by global norm is exec/step_end.h, as it spans the ranks).
//
//   Optimizer opt({.kind = OptimizerKind::kAdam, .weight_decay = 0.01}, program->backend());
//   LearningRateSchedule lr({.base = 1e-3, .warmup_steps = 100, .total_steps = 10000,
//                            .decay = Decay::kCosine});
//   for (int64_t step = 0; step < steps; ++step) {
//     ... program->RunStep() ...
//     TS_RETURN_IF_ERROR(opt.Apply(program->parameters(), lr.At(step)));
//   }
//
// Update rules (PyTorch's, so runs can be compared with it):
// - SGD:      w -= lr * (g + wd * w)
// - momentum: v = mu * v + (g + wd * w); w -= lr * v                       (torch.optim.SGD)
// - Adam:     m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//             w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps) + lr * wd * w  (AdamW:
//             decoupled weight decay, torch.optim.AdamW)
// The update runs on the back-end the optimizer was made for (Backend::Update, backend.h), where
// its state lives too: kept per parameter name, so it survives re-creating the program on the
// same back-end, and it is what a checkpoint saves (ReadState() / SetState()).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/training_program.h"
#include "tessera/memory/device_memory.h"

namespace tessera::exec {

using costmodel::OptimizerKind;  // the one optimizer enum, shared with the planner

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weight_decay = 0;
};

class Optimizer {
 public:
  // `backend` (where the parameters live) must outlive the optimizer.
  Optimizer(const OptimizerOptions& options, Backend& backend)
      : options_(options), backend_(backend) {}

  // One update of every parameter from its gradient with learning rate `lr`. The back-end's
  // errors (out of device memory for the state, say) as they are.
  absl::Status Apply(std::vector<TrainingProgram::Parameter>& params, double lr);
  // The constants of update number `t` (1-based) at rate `lr`, computed in double.
  static UpdateRule Rule(const OptimizerOptions& options, double lr, int64_t t);

  // Per parameter name, the state vectors (momentum: v; Adam: m then v), as host copies.
  struct State {
    std::vector<std::vector<float>> slots;
  };
  absl::StatusOr<std::map<std::string, State>> ReadState() const;
  int64_t updates() const { return updates_; }
  // InvalidArgument naming the parameter when a slot's size does not match it.
  absl::Status SetState(const std::map<std::string, State>& state, int64_t updates,
                        const std::vector<TrainingProgram::Parameter>& params);
  const OptimizerOptions& options() const { return options_; }

 private:
  // A parameter's state vectors in the back-end's memory.
  struct Slots {
    std::vector<memory::DeviceAllocation> arrays;
    size_t size = 0;  // floats per array
  };
  absl::StatusOr<Slots*> SlotsOf(const std::string& name, size_t size);

  OptimizerOptions options_;
  Backend& backend_;
  std::map<std::string, Slots> state_;
  int64_t updates_ = 0;
};

enum class Decay : uint8_t { kConstant, kLinear, kCosine };
absl::string_view DecayName(Decay decay);  // "constant", "linear", "cosine"
// InvalidArgument naming `name` and the known ones.
absl::StatusOr<Decay> ParseDecay(absl::string_view name);

struct ScheduleOptions {
  double base = 0.01;
  int64_t warmup_steps = 0;  // linear from base/warmup_steps up to base
  int64_t total_steps = 0;   // decay reaches `final_fraction * base` here (0: no decay)
  Decay decay = Decay::kConstant;
  double final_fraction = 0;
};

class LearningRateSchedule {
 public:
  explicit LearningRateSchedule(const ScheduleOptions& options) : options_(options) {}
  // The rate for 0-based step `step`.
  double At(int64_t step) const;

 private:
  ScheduleOptions options_;
};

}  // namespace tessera::exec
