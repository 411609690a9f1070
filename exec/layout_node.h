// A layer of a rank's program that changes the layout of some of its inputs before it computes
// (rank_plan.h LayoutLayer; layout_transition.h) and returns their gradients in the layout
// they are held in after; it computes with the CPU kernels, the vocabulary-parallel loss
// (vocab_parallel_loss.h) or another NodeKernel (a model-parallel or late-multiply layer,
// distributed_dense.h) on the inputs as it reads them.
//
//   auto node = std::make_shared<LayoutNode>(activations_comm, layer, /*inner=*/nullptr);
//   options.node_kernels[layer.node] = node;
//
// Its collectives run on the communicator given (the rank's activation channel), blocking, in
// program order; traffic_bytes() and blocked_seconds() include the inner kernel's.
#pragma once

#include <memory>
#include <vector>

#include "tessera/exec/collective_kernel.h"
#include "tessera/exec/rank_plan.h"
#include "tessera/exec/vocab_parallel_loss.h"

namespace tessera::exec {

class LayoutNode : public CollectiveKernel {
 public:
  LayoutNode(comm::Communicator& comm, LayoutLayer layer,
             std::shared_ptr<CollectiveKernel> inner);
  int64_t traffic_bytes() const override;
  double blocked_seconds() const override;

  absl::Status Forward(const graph::Node& node, Tensors inputs, Tensors outputs,
                       Backend& backend, const StepContext& ctx) override;
  absl::Status Backward(const graph::Node& node, Tensors inputs, Tensors outputs,
                        Tensors grad_outputs, Tensors grad_inputs,
                        Backend& backend, const StepContext& ctx) override;

 private:
  // The inputs as the layer reads them: the transitioned ones from read_, the others as given.
  std::vector<TensorView> ReadInputs(Tensors inputs) const;

  const LayoutLayer layer_;
  const std::shared_ptr<CollectiveKernel> inner_;
  VocabParallelLoss loss_;
  std::vector<graph::Shape> read_shape_;           // per transition
  std::vector<std::vector<float>> read_, dread_;  // per transition, kept from step to step
};

}  // namespace tessera::exec
