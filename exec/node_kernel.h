// A node whose forward and backward the caller computes instead of the CPU kernels: how the
// hybrid runtime (exec/hybrid_worker.h, each rank's share from exec/rank_plan.h) runs its
// distributed layers — a model-parallel layer that gathers its input and exchanges its output, a
// late-multiply layer that gathers X and dY — inside a TrainingProgram's schedule, arena and
// autodiff.
//
//   class MyGemm : public exec::NodeKernel { ... };
//   ProgramOptions options;
//   options.node_kernels["fc2"] = std::make_shared<MyGemm>(...);
//   TS_ASSIGN_OR_RETURN(auto program, TrainingProgram::Create(rank_graph, options));
//
// The calls follow the CPU kernels' conventions (exec/cpu/kernels.h): tensors follow
// node.inputs / node.outputs; a grad output with data nullptr is zero; Backward overwrites every
// requested grad input (data != nullptr). A NodeKernel keeps what its backward needs itself.
// The node's tensors may have any shapes the kernel accepts (a rank's weight shard, say).
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

class NodeKernel {
 public:
  using Tensors = absl::Span<const cpu::Tensor<float>>;
  virtual ~NodeKernel() = default;
  virtual absl::Status Forward(const graph::Node& node, Tensors inputs, Tensors outputs,
                               const cpu::KernelContext& ctx) = 0;
  virtual absl::Status Backward(const graph::Node& node, Tensors inputs, Tensors outputs,
                                Tensors grad_outputs, Tensors grad_inputs,
                                const cpu::KernelContext& ctx) = 0;
};

}  // namespace tessera::exec
