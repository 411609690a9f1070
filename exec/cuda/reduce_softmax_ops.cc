// CUDA ReduceSum/ReduceMean/ReduceMax over any axes, and Softmax/LogSoftmax over any axis.
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

ReduceCode ReduceCodeOf(OpKind k) {
  return k == OpKind::kReduceMax ? ReduceCode::kMax
         : k == OpKind::kReduceMean ? ReduceCode::kMean
                                    : ReduceCode::kSum;
}

absl::Status ReducedAxes(const graph::Node& node, const graph::Shape& in, int* reduced) {
  const auto& axes = std::get<graph::AxesAttrs>(node.attrs).axes;
  const int64_t rank = static_cast<int64_t>(in.size());
  for (int d = 0; d < kMaxRank; ++d) reduced[d] = axes.empty() ? 1 : 0;
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      return NodeError(node, absl::StrCat("reduction axis ", a, " out of range for rank ", rank));
    }
    reduced[axis] = 1;
  }
  return absl::OkStatus();
}

absl::Status ReduceForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const Dims in, ToDims(a.node, a.inputs[0].shape));
  int reduced[kMaxRank];
  TS_RETURN_IF_ERROR(ReducedAxes(a.node, a.inputs[0].shape, reduced));
  TS_CUDA_RETURN_IF_ERROR(LaunchReduce(ReduceCodeOf(a.node.kind), a.inputs[0].data, in, reduced,
                                       a.outputs[0].data, a.ctx.stream));
  return absl::OkStatus();
}

// ReduceMax's gradient goes to every element equal to the maximum (reads X and Y).
absl::Status ReduceBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  TS_ASSIGN_OR_RETURN(const Dims in, ToDims(a.node, a.inputs[0].shape));
  int reduced[kMaxRank];
  TS_RETURN_IF_ERROR(ReducedAxes(a.node, a.inputs[0].shape, reduced));
  TS_CUDA_RETURN_IF_ERROR(LaunchReduceBackward(ReduceCodeOf(a.node.kind), a.inputs[0].data,
                                               a.outputs[0].data, dy, in, reduced, dx.data,
                                               a.ctx.stream));
  return absl::OkStatus();
}

absl::Status Geometry(const graph::Node& node, const graph::Shape& s, int64_t* outer,
                      int64_t* axis_dim, int64_t* inner) {
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = std::get<graph::AxisAttrs>(node.attrs).axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return NodeError(node, absl::StrCat("softmax axis out of range for rank ", rank));
  }
  *outer = *inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) *outer *= s[d];
    if (d > axis) *inner *= s[d];
  }
  *axis_dim = s[axis];
  return absl::OkStatus();
}

absl::Status SoftmaxForward(const FwdArgs& a) {
  int64_t outer, axis, inner;
  TS_RETURN_IF_ERROR(Geometry(a.node, a.inputs[0].shape, &outer, &axis, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchSoftmax(a.inputs[0].data, a.outputs[0].data, outer, axis, inner,
                                        a.node.kind == OpKind::kLogSoftmax, a.ctx.stream));
  return absl::OkStatus();
}

absl::Status SoftmaxBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  int64_t outer, axis, inner;
  TS_RETURN_IF_ERROR(Geometry(a.node, a.inputs[0].shape, &outer, &axis, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchSoftmaxBackward(a.outputs[0].data, dy, dx.data, outer, axis,
                                                inner, a.node.kind == OpKind::kLogSoftmax,
                                                a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaReduceSoftmax(OpTable& table) {
  for (OpKind k : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    Slot(table, k) = {&ReduceForward, &ReduceBackward};
  }
  Slot(table, OpKind::kSoftmax) = {&SoftmaxForward, &SoftmaxBackward};
  Slot(table, OpKind::kLogSoftmax) = {&SoftmaxForward, &SoftmaxBackward};
}

}  // namespace tessera::exec::cuda
