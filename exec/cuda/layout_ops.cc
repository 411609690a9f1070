// CUDA layout ops: the reshape family (Identity, Reshape, Flatten, Squeeze, Unsqueeze) as device
// copies, Transpose, Concat, Split, Slice, Expand (strided copies, launch.h's LaunchCopyElements
// forward and LaunchCopy backward), Pad and Gather. The reshape family and the strided copies move
// any dtype's elements forward (int64 ids, masks); Pad and Gather's data are float.
#include <numeric>

#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

std::vector<int64_t> Dense(const graph::Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

View DenseView(const graph::Shape& s, int64_t offset = 0) {
  View v;
  v.offset = offset;
  const std::vector<int64_t> st = Dense(s);
  for (size_t d = 0; d < s.size(); ++d) v.s[d] = st[d];
  return v;
}

absl::StatusOr<int64_t> Axis(const graph::Node& node, int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return NodeError(node, absl::StrCat("axis out of range for rank ", rank));
  return axis;
}

absl::Status ByteCopyForward(const FwdArgs& a) {
  const int64_t bytes = a.inputs[0].size() * graph::DTypeSize(a.inputs[0].dtype);
  if (bytes > 0 && a.outputs[0].data != a.inputs[0].data) {
    TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(a.outputs[0].data, a.inputs[0].data, bytes,
                                            cudaMemcpyDeviceToDevice, a.ctx.stream));
  }
  return absl::OkStatus();
}

absl::Status GradCopyBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  return CopyDevice(dx.data, dy, dx.size(), a.ctx.stream);
}

std::vector<int64_t> Perm(const graph::Node& node, size_t rank) {
  std::vector<int64_t> perm = std::get<graph::PermAttrs>(node.attrs).perm;
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  return perm;
}

// y[i] = x[perm applied]; backward is the same copy with the roles swapped.
absl::Status TransposeCopy(const graph::Node& node, const graph::Shape& x_shape,
                           const std::vector<int64_t>& perm, const void* x, void* y,
                           bool forward, int element_bytes, cudaStream_t stream) {
  if (perm.size() != x_shape.size()) return NodeError(node, "perm must list every axis once");
  graph::Shape y_shape(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(perm.size())) {
      return NodeError(node, "perm must list every axis once");
    }
    y_shape[d] = x_shape[perm[d]];
  }
  TS_ASSIGN_OR_RETURN(const Dims space, ToDims(node, y_shape));
  const std::vector<int64_t> xs = Dense(x_shape);
  View xv;  // x's element read by y's index
  for (size_t d = 0; d < perm.size(); ++d) xv.s[d] = xs[perm[d]];
  const View yv = DenseView(y_shape);
  if (forward) {
    TS_CUDA_RETURN_IF_ERROR(LaunchCopyElements(x, xv, y, yv, space, element_bytes, stream));
  } else {  // x, y are dy, dx here: dx[xv] = dy[yv]
    TS_CUDA_RETURN_IF_ERROR(LaunchCopyElements(x, yv, y, xv, space, element_bytes, stream));
  }
  return absl::OkStatus();
}

absl::Status TransposeForward(const FwdArgs& a) {
  return TransposeCopy(a.node, a.inputs[0].shape, Perm(a.node, a.inputs[0].shape.size()),
                       a.inputs[0].data, a.outputs[0].data, true,
                       graph::DTypeSize(a.inputs[0].dtype), a.ctx.stream);
}

absl::Status TransposeBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  return TransposeCopy(a.node, a.inputs[0].shape, Perm(a.node, a.inputs[0].shape.size()), dy,
                       dx.data, false, sizeof(float), a.ctx.stream);
}

// Concat and Split: piece p is the block [begin, begin + size) of `whole` along `axis`.
// to_whole copies the piece into the whole, else the whole's block into the piece; elements of
// the piece's dtype.
absl::Status PieceCopy(const graph::Node& node, const graph::Shape& whole_shape, int64_t axis,
                       int64_t begin, const Tensor& piece, float* whole, bool to_whole,
                       cudaStream_t stream) {
  const int bytes = graph::DTypeSize(piece.dtype);
  TS_ASSIGN_OR_RETURN(const Dims space, ToDims(node, piece.shape));
  const std::vector<int64_t> ws = Dense(whole_shape);
  View wv;
  wv.offset = begin * ws[axis];
  for (size_t d = 0; d < whole_shape.size(); ++d) wv.s[d] = ws[d];
  const View pv = DenseView(piece.shape);
  if (to_whole) {
    TS_CUDA_RETURN_IF_ERROR(LaunchCopyElements(piece.data, pv, whole, wv, space, bytes, stream));
  } else {
    TS_CUDA_RETURN_IF_ERROR(LaunchCopyElements(whole, wv, piece.data, pv, space, bytes, stream));
  }
  return absl::OkStatus();
}

// Concat: inputs are the pieces, the output the whole. Split: the reverse.
template <bool kConcat>
absl::Status PiecesForward(const FwdArgs& a) {
  const Tensor& whole = kConcat ? a.outputs[0] : a.inputs[0];
  absl::Span<const Tensor> pieces = kConcat ? a.inputs : a.outputs;
  const int64_t raw = kConcat ? std::get<graph::AxisAttrs>(a.node.attrs).axis
                              : std::get<graph::SplitAttrs>(a.node.attrs).axis;
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      Axis(a.node, raw, static_cast<int64_t>(whole.shape.size())));
  int64_t begin = 0;
  for (const Tensor& p : pieces) {
    TS_RETURN_IF_ERROR(
        PieceCopy(a.node, whole.shape, axis, begin, p, whole.data, kConcat, a.ctx.stream));
    begin += p.shape[axis];
  }
  return absl::OkStatus();
}

template <bool kConcat>
absl::Status PiecesBackward(const BwdArgs& a) {
  const graph::Shape& whole_shape = kConcat ? a.outputs[0].shape : a.inputs[0].shape;
  const int64_t raw = kConcat ? std::get<graph::AxisAttrs>(a.node.attrs).axis
                              : std::get<graph::SplitAttrs>(a.node.attrs).axis;
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      Axis(a.node, raw, static_cast<int64_t>(whole_shape.size())));
  int64_t begin = 0;
  if (kConcat) {  // dX_i = block i of dY
    const float* dy = GradOut(a, 0);
    for (const Tensor& dx : a.grad_inputs) {
      if (dx.present()) {
        if (dy == nullptr) {
          TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
        } else {
          TS_RETURN_IF_ERROR(PieceCopy(a.node, whole_shape, axis, begin, dx,
                                       const_cast<float*>(dy), false, a.ctx.stream));
        }
      }
      begin += dx.shape[axis];
    }
    return absl::OkStatus();
  }
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
  for (size_t j = 0; j < a.outputs.size(); ++j) {
    Tensor piece = a.outputs[j];
    piece.data = const_cast<float*>(GradOut(a, j));
    if (piece.data != nullptr) {
      TS_RETURN_IF_ERROR(
          PieceCopy(a.node, whole_shape, axis, begin, piece, dx.data, true, a.ctx.stream));
    }
    begin += piece.shape[axis];
  }
  return absl::OkStatus();
}

// Where Slice reads X: offset + sum_d i_d * strides[d] (clamped as the CPU kernel does).
absl::StatusOr<View> SliceView(const graph::Node& node, const graph::Shape& in) {
  const auto& s = std::get<graph::SliceAttrs>(node.attrs);
  const int64_t rank = static_cast<int64_t>(in.size());
  View v = DenseView(in);
  const std::vector<int64_t> dense = Dense(in);
  for (size_t i = 0; i < s.starts.size(); ++i) {
    TS_ASSIGN_OR_RETURN(const int64_t axis,
                        Axis(node, s.axes.empty() ? static_cast<int64_t>(i) : s.axes[i], rank));
    const int64_t dim = in[axis];
    const int64_t step = s.steps.empty() ? 1 : s.steps[i];
    int64_t start = s.starts[i] < 0 ? (s.starts[i] < -dim ? -1 : s.starts[i] + dim) : s.starts[i];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    v.offset += start * dense[axis];
    v.s[axis] = step * dense[axis];
  }
  return v;
}

absl::Status SliceForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const View xv, SliceView(a.node, a.inputs[0].shape));
  TS_ASSIGN_OR_RETURN(const Dims space, ToDims(a.node, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(LaunchCopyElements(a.inputs[0].data, xv, a.outputs[0].data,
                                             DenseView(a.outputs[0].shape), space,
                                             graph::DTypeSize(a.inputs[0].dtype), a.ctx.stream));
  return absl::OkStatus();
}

absl::Status SliceBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const View xv, SliceView(a.node, a.inputs[0].shape));
  TS_ASSIGN_OR_RETURN(const Dims space, ToDims(a.node, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(LaunchCopy(dy, DenseView(a.outputs[0].shape), dx.data, xv, space,
                                     false, a.ctx.stream));
  return absl::OkStatus();
}

absl::Status ExpandForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(LaunchCopyElements(
      a.inputs[0].data, BroadcastView(a.inputs[0].shape, out), a.outputs[0].data,
      DenseView(a.outputs[0].shape), out, graph::DTypeSize(a.inputs[0].dtype), a.ctx.stream));
  return absl::OkStatus();
}

absl::Status ExpandBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  Dims in = out;
  const int shift = out.rank - static_cast<int>(dx.shape.size());
  for (int d = 0; d < out.rank; ++d) in.d[d] = d < shift ? 1 : dx.shape[d - shift];
  TS_CUDA_RETURN_IF_ERROR(LaunchSumToShape(dy, out, dx.data, in, a.ctx.stream));
  return absl::OkStatus();
}

PadCode PadCodeOf(graph::PadMode m) {
  return m == graph::PadMode::kReflect ? PadCode::kReflect
         : m == graph::PadMode::kEdge  ? PadCode::kEdge
                                       : PadCode::kConstant;
}

absl::Status CheckPads(const graph::Node& node, const graph::Shape& in) {
  const auto& p = std::get<graph::PadAttrs>(node.attrs);
  if (p.pads.size() != 2 * in.size() || in.size() > static_cast<size_t>(kMaxRank)) {
    return NodeError(node, "pads must hold a begin and an end per axis");
  }
  for (size_t d = 0; d < in.size(); ++d) {
    if (p.mode != graph::PadMode::kConstant && in[d] == 0) {
      return NodeError(node, absl::StrCat("cannot reflect/edge-pad axis ", d, ", which is empty"));
    }
  }
  return absl::OkStatus();
}

// Pad and Gather compute on float data (Gather's indices are int64).
absl::Status RequireFloatData(const graph::Node& node, const Tensor& data) {
  if (graph::IsFloating(data.dtype)) return absl::OkStatus();
  return NodeError(node, absl::StrCat("the CUDA kernel takes float32 data, not ",
                                      graph::DTypeName(data.dtype),
                                      "; run this model with --device cpu"));
}

absl::Status PadForward(const FwdArgs& a) {
  TS_RETURN_IF_ERROR(RequireFloatData(a.node, a.inputs[0]));
  TS_RETURN_IF_ERROR(CheckPads(a.node, a.inputs[0].shape));
  const auto& p = std::get<graph::PadAttrs>(a.node.attrs);
  TS_ASSIGN_OR_RETURN(const Dims in, ToDims(a.node, a.inputs[0].shape));
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(LaunchPad(PadCodeOf(p.mode), a.inputs[0].data, in, a.outputs[0].data,
                                    out, p.pads.data(), static_cast<float>(p.value),
                                    a.ctx.stream));
  return absl::OkStatus();
}

absl::Status PadBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_RETURN_IF_ERROR(CheckPads(a.node, a.inputs[0].shape));
  const auto& p = std::get<graph::PadAttrs>(a.node.attrs);
  TS_ASSIGN_OR_RETURN(const Dims in, ToDims(a.node, a.inputs[0].shape));
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(
      LaunchPadBackward(PadCodeOf(p.mode), dy, out, dx.data, in, p.pads.data(), a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

// Gather's geometry and validated indices (negative ones count from the end, as ONNX).
absl::Status GatherIndices(const graph::Node& node, const Tensor& data, const Tensor& indices,
                           int64_t axis, bool allow_negative, const KernelContext& ctx,
                           memory::DeviceAllocation* out, int64_t* outer, int64_t* inner) {
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IntsToHost(indices, ctx.stream));
  const int64_t dim = data.shape[axis];
  for (size_t k = 0; k < idx.size(); ++k) {
    if (allow_negative && idx[k] < 0) idx[k] += dim;
    if (idx[k] < 0 || idx[k] >= dim) {
      return NodeError(node, absl::StrCat("index ", idx[k], " at position ", k,
                                          " is outside [0, ", dim, ")"));
    }
  }
  *outer = *inner = 1;
  for (size_t d = 0; d < data.shape.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) *outer *= data.shape[d];
    if (static_cast<int64_t>(d) > axis) *inner *= data.shape[d];
  }
  TS_ASSIGN_OR_RETURN(*out, UploadInts(node, ctx, idx));
  return absl::OkStatus();
}

namespace {

absl::Status GatherForward(const FwdArgs& a) {
  const Tensor& data = a.inputs[0];
  TS_RETURN_IF_ERROR(RequireFloatData(a.node, data));
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      Axis(a.node, std::get<graph::AxisAttrs>(a.node.attrs).axis,
                           static_cast<int64_t>(data.shape.size())));
  memory::DeviceAllocation idx;
  int64_t outer, inner;
  TS_RETURN_IF_ERROR(
      GatherIndices(a.node, data, a.inputs[1], axis, true, a.ctx, &idx, &outer, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchGather(data.data, outer, data.shape[axis], inner,
                                       As<const int64_t>(idx),
                                       a.inputs[1].size(), a.outputs[0].data, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));  // idx dies here
  return absl::OkStatus();
}

absl::Status GatherBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  const Tensor& data = a.inputs[0];
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      Axis(a.node, std::get<graph::AxisAttrs>(a.node.attrs).axis,
                           static_cast<int64_t>(data.shape.size())));
  memory::DeviceAllocation idx;
  int64_t outer, inner;
  TS_RETURN_IF_ERROR(
      GatherIndices(a.node, data, a.inputs[1], axis, true, a.ctx, &idx, &outer, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchGatherBackward(dy, outer, data.shape[axis], inner,
                                               As<const int64_t>(idx),
                                               a.inputs[1].size(), dx.data, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaLayout(OpTable& table) {
  for (OpKind k : {OpKind::kIdentity, OpKind::kReshape, OpKind::kFlatten, OpKind::kSqueeze,
                   OpKind::kUnsqueeze}) {
    Slot(table, k) = {&ByteCopyForward, &GradCopyBackward};
  }
  Slot(table, OpKind::kTranspose) = {&TransposeForward, &TransposeBackward};
  Slot(table, OpKind::kConcat) = {&PiecesForward<true>, &PiecesBackward<true>};
  Slot(table, OpKind::kSplit) = {&PiecesForward<false>, &PiecesBackward<false>};
  Slot(table, OpKind::kSlice) = {&SliceForward, &SliceBackward};
  Slot(table, OpKind::kExpand) = {&ExpandForward, &ExpandBackward};
  Slot(table, OpKind::kPad) = {&PadForward, &PadBackward};
  Slot(table, OpKind::kGather) = {&GatherForward, &GatherBackward};
}

}  // namespace tessera::exec::cuda
