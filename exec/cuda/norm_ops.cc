// CUDA normalisation ops: LayerNormalization (custom kernel). Conv, pooling and
// BatchNormalization (cuDNN) are not implemented yet (UnimplementedError from the dispatcher).
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

absl::Status RowsCols(const graph::Node& node, const graph::Shape& shape, int64_t* rows,
                      int64_t* cols) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = std::get<graph::LayerNormAttrs>(node.attrs).axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return NodeError(node, absl::StrCat("LayerNormalization axis out of range for rank ", rank));
  }
  *rows = *cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? *rows : *cols) *= shape[d];
  return absl::OkStatus();
}

// Keeps the row means and inverse stds in state.buffers[0], [1].
absl::Status LayerNormForward(const FwdArgs& a) {
  int64_t rows, cols;
  TS_RETURN_IF_ERROR(RowsCols(a.node, a.inputs[0].shape, &rows, &cols));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation mean, Scratch<float>(a.node, a.ctx, rows));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation inv, Scratch<float>(a.node, a.ctx, rows));
  const float* bias = a.inputs.size() > 2 ? a.inputs[2].data : nullptr;
  const float eps = static_cast<float>(std::get<graph::LayerNormAttrs>(a.node.attrs).epsilon);
  TS_CUDA_RETURN_IF_ERROR(LaunchLayerNorm(a.inputs[0].data, a.inputs[1].data, bias, rows, cols,
                                          eps, a.outputs[0].data, As<float>(mean), As<float>(inv),
                                          a.ctx.stream));
  a.state.buffers.push_back(std::move(mean));
  a.state.buffers.push_back(std::move(inv));
  return absl::OkStatus();
}

absl::Status LayerNormBackward(const BwdArgs& a) {
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) {
    for (const Tensor& g : a.grad_inputs) TS_RETURN_IF_ERROR(ZeroFill(g, a.ctx.stream));
    return absl::OkStatus();
  }
  if (a.state.buffers.size() < 2) return NodeError(a.node, "backward without a forward");
  int64_t rows, cols;
  TS_RETURN_IF_ERROR(RowsCols(a.node, a.inputs[0].shape, &rows, &cols));
  float* dbias_ptr = a.grad_inputs.size() > 2 ? a.grad_inputs[2].data : nullptr;
  TS_CUDA_RETURN_IF_ERROR(LaunchLayerNormBackward(
      a.inputs[0].data, a.inputs[1].data, dy, As<const float>(a.state.buffers[0]),
      As<const float>(a.state.buffers[1]), rows, cols, a.grad_inputs[0].data, a.grad_inputs[1].data,
      dbias_ptr, a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaNorm(OpTable& table) {
  Slot(table, OpKind::kLayerNorm) = {&LayerNormForward, &LayerNormBackward};
}

}  // namespace tessera::exec::cuda
