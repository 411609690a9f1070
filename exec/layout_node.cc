// LayoutNode (layout_node.h): input transitions, then the layer's own computation.
#include "tessera/exec/layout_node.h"

#include "tessera/base/status_macros.h"
#include "tessera/exec/axis_collectives.h"
#include "tessera/exec/backend/cpu_backend.h"
#include "tessera/exec/layout_transition.h"
#include "tessera/graph/dtype.h"

namespace tessera::exec {

LayoutNode::LayoutNode(comm::Communicator& comm, LayoutLayer layer,
                       std::shared_ptr<CollectiveKernel> inner)
    : CollectiveKernel(comm), layer_(std::move(layer)), inner_(std::move(inner)),
      read_shape_(layer_.transitions.size()), read_(layer_.transitions.size()),
      dread_(layer_.transitions.size()) {}

int64_t LayoutNode::traffic_bytes() const {
  return CollectiveKernel::traffic_bytes() + (inner_ ? inner_->traffic_bytes() : 0);
}

double LayoutNode::blocked_seconds() const {
  return CollectiveKernel::blocked_seconds() + (inner_ ? inner_->blocked_seconds() : 0);
}

std::vector<TensorView> LayoutNode::ReadInputs(Tensors inputs) const {
  std::vector<TensorView> read(inputs.begin(), inputs.end());
  for (size_t k = 0; k < layer_.transitions.size(); ++k) {
    TensorView& t = read[layer_.transitions[k].input];
    t.shape = read_shape_[k];
    t.data = const_cast<float*>(read_[k].data());
  }
  return read;
}

absl::Status LayoutNode::Forward(const graph::Node& node, Tensors in, Tensors out,
                                 Backend& backend, const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(NodeState* state, HostState(node, backend));
  for (size_t k = 0; k < layer_.transitions.size(); ++k) {
    const InputTransition& t = layer_.transitions[k];
    const cpu::Tensor<float> held = HostTensor(in[t.input]);
    read_shape_[k] = ReadShape(t, held.shape, comm_.size());
    read_[k].resize((graph::NumElements(read_shape_[k]) * StoredBytes(held.dtype) + 3) / 4);
    TS_RETURN_IF_ERROR(Counted([&] {
      return TransitionForward(comm_, t, held, read_[k].data(), &scratch_);
    }));
  }
  const std::vector<TensorView> read = ReadInputs(in);
  if (layer_.feature_loss) {
    const auto reduce = [&](std::vector<float>& v, comm::ReduceOp op) {
      return Counted([&] { return comm_.AllReduce(v, op); });
    };
    return loss_.Forward(node, HostTensor(read[0]), HostTensor(read[1]), comm_.rank(),
                         comm_.size(), reduce, out[0].floats());
  }
  if (inner_ != nullptr) return inner_->Forward(node, read, out, backend, ctx);
  return backend.Forward(node, read, out, ctx, *state);
}

absl::Status LayoutNode::Backward(const graph::Node& node, Tensors in, Tensors out,
                                  Tensors dout, Tensors din, Backend& backend,
                                  const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(NodeState* state, HostState(node, backend));
  const std::vector<TensorView> read = ReadInputs(in);
  std::vector<TensorView> dread(din.begin(), din.end());
  for (size_t k = 0; k < layer_.transitions.size(); ++k) {
    TensorView& d = dread[layer_.transitions[k].input];
    d.shape = read_shape_[k];
    if (!d.present()) continue;
    dread_[k].resize(graph::NumElements(read_shape_[k]));
    d.data = dread_[k].data();
  }
  if (layer_.feature_loss) {
    TS_RETURN_IF_ERROR(loss_.Backward(node, dout[0].floats(), HostTensor(dread[0])));
  } else if (inner_ != nullptr) {
    TS_RETURN_IF_ERROR(inner_->Backward(node, read, out, dout, dread, backend, ctx));
  } else {
    TS_RETURN_IF_ERROR(backend.Backward(node, read, out, dout, dread, ctx, *state));
  }
  for (size_t k = 0; k < layer_.transitions.size(); ++k) {
    const InputTransition& t = layer_.transitions[k];
    if (!din[t.input].present()) continue;
    TS_RETURN_IF_ERROR(Counted([&] {
      return TransitionBackward(comm_, t, dread_[k].data(), HostTensor(din[t.input]), &scratch_);
    }));
  }
  return absl::OkStatus();
}

}  // namespace tessera::exec
