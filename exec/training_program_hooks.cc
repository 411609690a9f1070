// ProgramOptions' hooks of the training program (training_program.h): the caller's NodeKernels,
// the loss seed, and the gradient-ready reports the data-parallel runtime overlaps with.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/training_program.h"
#include "tessera/exec/training_program_impl.h"

namespace tessera::exec {

absl::Status TrainingProgram::InstallHooks(const ProgramOptions& options) {
  Impl& m = *impl_;
  m.loss_scale = options.loss_scale;
  m.on_gradient_ready = options.on_gradient_ready;
  m.on_node_timed = options.on_node_timed;
  m.node_kernels.assign(graph_.num_nodes(), nullptr);
  for (const auto& [name, kernel] : options.node_kernels) {
    bool found = false;
    for (graph::NodeId n = 0; n < graph_.num_nodes(); ++n) {
      if (graph_.node(n).name != name) continue;
      m.node_kernels[n] = kernel;
      found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ProgramOptions::node_kernels names '", name, "', which is not a node of model '",
          graph_.name(), "'"));
    }
  }
  return absl::OkStatus();
}

void TrainingProgram::set_loss_scale(float scale) { impl_->loss_scale = scale; }

// A parameter's gradient is final after the last backward step that writes its content: the
// backward of any node reading the parameter or a view sharing its gradient memory.
void TrainingProgram::ScheduleGradientReady() {
  Impl& m = *impl_;
  const std::vector<memory::Step>& steps = lifetimes_.steps;
  std::vector<int64_t> last(graph_.num_tensors(), -1);  // per gradient content
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].phase != memory::Phase::kBackward) continue;
    for (graph::TensorId t : graph_.node(steps[k].node).inputs) {
      if (t == graph::kNoTensor || m.grad_addr[t] == nullptr) continue;
      last[m.grad_content[t]] = static_cast<int64_t>(k);
    }
  }
  m.ready_after_step.assign(steps.size(), {});
  m.ready_at_end.clear();
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const int64_t k = last[m.grad_content[parameters_[i].tensor]];
    (k < 0 ? m.ready_at_end : m.ready_after_step[k]).push_back(i);
  }
}

absl::Status TrainingProgram::ReportGradientsReady(const std::vector<size_t>& params) {
  Impl& m = *impl_;
  if (!m.on_gradient_ready) return absl::OkStatus();
  for (size_t i : params) {
    Parameter& p = parameters_[i];
    // Not written this step (no contribution reached it): its gradient is zero.
    if (!m.written[m.grad_content[p.tensor]]) TS_RETURN_IF_ERROR(m.backend->Fill(p.grad, 0.f));
    TS_RETURN_IF_ERROR(m.on_gradient_ready(i));
  }
  return absl::OkStatus();
}

std::vector<size_t> TrainingProgram::GradientReadyOrder() const {
  std::vector<size_t> order;
  for (const std::vector<size_t>& at : impl_->ready_after_step) {
    order.insert(order.end(), at.begin(), at.end());
  }
  order.insert(order.end(), impl_->ready_at_end.begin(), impl_->ready_at_end.end());
  return order;
}

}  // namespace tessera::exec
