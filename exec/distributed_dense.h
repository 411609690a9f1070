// The hybrid runtime's distributed Gemm/MatMul (and model-parallel Embedding) layers, as
// NodeKernels (exec/node_kernel.h) inside each rank's TrainingProgram. Both read X and write Y
// split over the batch (the layout every other layer uses), so they drop into the rank's graph
// in place of the node's kernels.
//
//   auto mp = std::make_shared<ModelParallelDense>(activations_comm, /*batch_axis=*/0);
//   options.node_kernels["classifier"] = mp;   // the weight in the rank graph is its shard
//
// Model parallel (the weight split along the output features N; rank r holds columns
// [rN/P, (r+1)N/P) and that slice of the bias; an Embedding's table [V, D] is split along D
// the same way, X is its token ids, and there is no dX):
//   forward:  X = all-gather(X_r);  Y^(r) = X W_r + b_r;  Y_r = all-to-all(Y^(r))
//   backward: dY^(r) = all-to-all(dY_r);  dW_r, db_r local;  dX_r = reduce-scatter(dY^(r) W_r^T)
// Late multiply (W whole on every rank):
//   forward:  Y_r = X_r W + b, local
//   backward: dX_r = dY_r W^T local; X = all-gather(X_r), dY = all-gather(dY_r);
//             dW = X^T dY, db = sum of dY over rows: the whole batch's gradient on every rank,
//             so W needs no all-reduce.
// All collectives are blocking, on the communicator given (the rank's activation channel).
// traffic_bytes() is the payload this layer has sent so far (collective_kernel.h).
#pragma once

#include <memory>
#include <vector>

#include "tessera/comm/communicator.h"
#include "tessera/exec/collective_kernel.h"

namespace tessera::exec {

class DistributedDense : public CollectiveKernel {
 public:
  DistributedDense(comm::Communicator& comm, int batch_axis)
      : CollectiveKernel(comm), axis_(batch_axis) {}

 protected:
  // `shape` with the batch axis P times larger (the whole batch).
  graph::Shape Whole(graph::Shape shape) const;

  const int axis_;
};

class ModelParallelDense : public DistributedDense {
 public:
  using DistributedDense::DistributedDense;
  absl::Status Forward(const graph::Node& node, Tensors inputs, Tensors outputs,
                       Backend& backend, const StepContext& ctx) override;
  absl::Status Backward(const graph::Node& node, Tensors inputs, Tensors outputs,
                        Tensors grad_outputs, Tensors grad_inputs,
                        Backend& backend, const StepContext& ctx) override;

 private:
  graph::Shape x_shape_, y_shape_;  // the whole X; this rank's feature slice of the whole Y
  std::vector<float> x_, y_, dy_, dx_;  // kept from step to step: no allocation per step
};

class LateMultiplyDense : public DistributedDense {
 public:
  using DistributedDense::DistributedDense;
  absl::Status Forward(const graph::Node& node, Tensors inputs, Tensors outputs,
                       Backend& backend, const StepContext& ctx) override;
  absl::Status Backward(const graph::Node& node, Tensors inputs, Tensors outputs,
                        Tensors grad_outputs, Tensors grad_inputs,
                        Backend& backend, const StepContext& ctx) override;

 private:
  std::vector<float> x_, dy_;
};

}  // namespace tessera::exec
