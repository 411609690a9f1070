// A node whose forward and backward the caller computes instead of the back-end's kernels: how
// the hybrid runtime (exec/hybrid_worker.h, each rank's share from exec/rank_plan.h) runs its
// distributed layers — a model-parallel layer that gathers its input and exchanges its output, a
// late-multiply layer that gathers X and dY — inside a TrainingProgram's schedule, arena and
// autodiff.
//
//   class MyGemm : public exec::NodeKernel { ... };
//   ProgramOptions options;
//   options.node_kernels["fc2"] = std::make_shared<MyGemm>(...);
//   TS_ASSIGN_OR_RETURN(auto program, TrainingProgram::Create(rank_graph, options));
//
// The calls follow the back-end's conventions (exec/backend/backend.h): tensors follow
// node.inputs / node.outputs, in the program's back-end's memory; a grad output with data
// nullptr is zero; Backward overwrites every requested grad input (data != nullptr). A
// NodeKernel keeps what its backward needs itself, and reaches the device through `backend`
// (host code may read the tensors directly only when backend.host_memory()). The node's tensors
// may have any shapes the kernel accepts (a rank's weight shard, say).
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

class NodeKernel {
 public:
  using Tensors = TensorViews;
  virtual ~NodeKernel() = default;
  virtual absl::Status Forward(const graph::Node& node, Tensors inputs, Tensors outputs,
                               Backend& backend, const StepContext& ctx) = 0;
  virtual absl::Status Backward(const graph::Node& node, Tensors inputs, Tensors outputs,
                                Tensors grad_outputs, Tensors grad_inputs, Backend& backend,
                                const StepContext& ctx) = 0;
};

// FailedPrecondition naming the node unless `backend` keeps its memory on the host: what
// NodeKernels that compute on the host (the distributed layers, so far) check first.
absl::Status RequireHostMemory(const graph::Node& node, const Backend& backend);

}  // namespace tessera::exec
