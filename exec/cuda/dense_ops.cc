// CUDA dense ops and the cross-entropy loss: Embedding (gather; atomicAdd scatter backward) and
// SoftmaxCrossEntropy. Gemm/MatMul via cuBLAS are not implemented yet (UnimplementedError).
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

// Embedding(ids, W): Gather of W's rows; negative ids are errors (docs/kernels.md).
absl::Status EmbeddingForward(const FwdArgs& a) {
  const Tensor& w = a.inputs[1];
  DeviceBuffer idx;
  int64_t outer, inner;
  TS_RETURN_IF_ERROR(
      GatherIndices(a.node, w, a.inputs[0], 0, false, a.ctx.stream, &idx, &outer, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchGather(w.data, 1, w.shape[0], inner,
                                       reinterpret_cast<const int64_t*>(idx.data()),
                                       a.inputs[0].size(), a.outputs[0].data, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

absl::Status EmbeddingBackward(const BwdArgs& a) {
  const Tensor& dw = a.grad_inputs[1];
  if (!dw.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dw, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  const Tensor& w = a.inputs[1];
  DeviceBuffer idx;
  int64_t outer, inner;
  TS_RETURN_IF_ERROR(
      GatherIndices(a.node, w, a.inputs[0], 0, false, a.ctx.stream, &idx, &outer, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchGatherBackward(dy, 1, w.shape[0], inner,
                                               reinterpret_cast<const int64_t*>(idx.data()),
                                               a.inputs[0].size(), dw.data, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

struct XentGeometry {
  int64_t outer = 1, classes = 1, inner = 1;
};

// Labels validated on the host; ignored positions become -1. Returns the counted positions.
absl::StatusOr<int64_t> XentLabels(const graph::Node& node, const Tensor& logits,
                                   const Tensor& labels, cudaStream_t stream, XentGeometry* g,
                                   DeviceBuffer* out) {
  if (logits.shape.size() < 2) return NodeError(node, "logits must be [N, C, d...]");
  g->outer = logits.shape[0];
  g->classes = logits.shape[1];
  g->inner = 1;
  for (size_t d = 2; d < logits.shape.size(); ++d) g->inner *= logits.shape[d];
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> l, IntsToHost(labels, stream));
  const int64_t ignore = std::get<graph::LossAttrs>(node.attrs).ignore_index;
  int64_t counted = 0;
  for (size_t k = 0; k < l.size(); ++k) {
    if (ignore >= 0 && l[k] == ignore) {
      l[k] = -1;
      continue;
    }
    if (l[k] < 0 || l[k] >= g->classes) {
      return NodeError(node, absl::StrCat("label ", l[k], " at position ", k, " is outside [0, ",
                                          g->classes, ")"));
    }
    ++counted;
  }
  TS_ASSIGN_OR_RETURN(*out, UploadInts(l, stream));
  return counted;
}

// Keeps the probabilities in state.buffers[0].
absl::Status XentForward(const FwdArgs& a) {
  XentGeometry g;
  DeviceBuffer labels;
  TS_ASSIGN_OR_RETURN(const int64_t counted,
                      XentLabels(a.node, a.inputs[0], a.inputs[1], a.ctx.stream, &g, &labels));
  const int64_t positions = g.outer * g.inner;
  TS_ASSIGN_OR_RETURN(DeviceBuffer probs,
                      DeviceBuffer::Allocate(std::max<int64_t>(1, a.inputs[0].size())));
  TS_ASSIGN_OR_RETURN(DeviceBuffer losses, DeviceBuffer::Allocate(std::max<int64_t>(1, positions)));
  const graph::Reduction reduction = std::get<graph::LossAttrs>(a.node.attrs).reduction;
  float* per_position = reduction == graph::Reduction::kNone ? a.outputs[0].data : losses.data();
  TS_CUDA_RETURN_IF_ERROR(LaunchSoftmaxXent(a.inputs[0].data,
                                            reinterpret_cast<const int64_t*>(labels.data()),
                                            g.outer, g.classes, g.inner, probs.data(),
                                            per_position, a.ctx.stream));
  if (reduction != graph::Reduction::kNone) {
    const float scale = reduction == graph::Reduction::kSum ? 1.f
                        : counted == 0 ? 0.f
                                       : 1.f / static_cast<float>(counted);
    TS_CUDA_RETURN_IF_ERROR(
        LaunchSumAll(losses.data(), positions, scale, a.outputs[0].data, a.ctx.stream));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  a.state.buffers.push_back(std::move(probs));
  return absl::OkStatus();
}

absl::Status XentBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  if (a.state.buffers.empty()) return NodeError(a.node, "backward without a forward");
  XentGeometry g;
  DeviceBuffer labels;
  TS_ASSIGN_OR_RETURN(const int64_t counted,
                      XentLabels(a.node, a.inputs[0], a.inputs[1], a.ctx.stream, &g, &labels));
  const graph::Reduction reduction = std::get<graph::LossAttrs>(a.node.attrs).reduction;
  const float scale = reduction != graph::Reduction::kMean ? 1.f
                      : counted == 0                       ? 0.f
                                                           : 1.f / static_cast<float>(counted);
  TS_CUDA_RETURN_IF_ERROR(LaunchSoftmaxXentBackward(
      a.state.buffers[0].data(), reinterpret_cast<const int64_t*>(labels.data()), g.outer,
      g.classes, g.inner, dy, reduction == graph::Reduction::kNone, scale, dx.data,
      a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaDense(OpTable& table) {
  Slot(table, OpKind::kEmbedding) = {&EmbeddingForward, &EmbeddingBackward};
  Slot(table, OpKind::kSoftmaxCrossEntropy) = {&XentForward, &XentBackward};
}

}  // namespace tessera::exec::cuda
