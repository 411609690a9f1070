// CUDA element-wise ops: unary activations, Dropout, Identity/Cast (float copies), broadcasting
// Add/Sub/Mul/Div/Pow and Where. Semantics as the CPU kernels (docs/kernels.md).
#include <cmath>

#include "tessera/exec/cuda/ops_impl.h"
#include "tessera/exec/dropout_mask_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

bool UnaryCodeOf(OpKind kind, UnaryCode* code) {
  switch (kind) {
    case OpKind::kRelu: *code = UnaryCode::kRelu; return true;
    case OpKind::kLeakyRelu: *code = UnaryCode::kLeakyRelu; return true;
    case OpKind::kSigmoid: *code = UnaryCode::kSigmoid; return true;
    case OpKind::kTanh: *code = UnaryCode::kTanh; return true;
    case OpKind::kGelu: *code = UnaryCode::kGelu; return true;
    case OpKind::kErf: *code = UnaryCode::kErf; return true;
    case OpKind::kSqrt: *code = UnaryCode::kSqrt; return true;
    case OpKind::kExp: *code = UnaryCode::kExp; return true;
    case OpKind::kLog: *code = UnaryCode::kLog; return true;
    case OpKind::kNeg: *code = UnaryCode::kNeg; return true;
    case OpKind::kReciprocal: *code = UnaryCode::kReciprocal; return true;
    case OpKind::kAbs: *code = UnaryCode::kAbs; return true;
    case OpKind::kClip: *code = UnaryCode::kClip; return true;
    default: return false;
  }
}

void Params(const graph::Node& node, float* alpha, float* beta) {
  *alpha = *beta = 0.f;
  if (const auto* s = std::get_if<graph::ScalarAttrs>(&node.attrs)) {
    *alpha = static_cast<float>(s->alpha);
    *beta = static_cast<float>(s->beta);
  }
}

absl::Status UnaryForward(const FwdArgs& a) {
  UnaryCode code;
  if (!UnaryCodeOf(a.node.kind, &code)) return NodeError(a.node, "not a unary op");
  float alpha, beta;
  Params(a.node, &alpha, &beta);
  TS_CUDA_RETURN_IF_ERROR(LaunchUnary(code, a.inputs[0].data, a.outputs[0].data,
                                      a.inputs[0].size(), alpha, beta, a.ctx.stream));
  return absl::OkStatus();
}

absl::Status UnaryBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  UnaryCode code;
  if (!UnaryCodeOf(a.node.kind, &code)) return NodeError(a.node, "not a unary op");
  float alpha, beta;
  Params(a.node, &alpha, &beta);
  TS_CUDA_RETURN_IF_ERROR(LaunchUnaryBackward(code, a.inputs[0].data, a.outputs[0].data, dy,
                                              dx.data, dx.size(), alpha, beta, a.ctx.stream));
  return absl::OkStatus();
}

// Identity and Cast between float tensors: copies.
absl::Status CopyForward(const FwdArgs& a) {
  if (!graph::IsFloating(a.inputs[0].dtype) || !graph::IsFloating(a.outputs[0].dtype)) {
    return NodeError(a.node, "the CUDA kernels cast only between floating tensors (float32)");
  }
  return CopyDevice(a.outputs[0].data, a.inputs[0].data, a.inputs[0].size(), a.ctx.stream);
}

absl::Status CopyBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  return CopyDevice(dx.data, dy, dx.size(), a.ctx.stream);
}

// The CPU kernel's mask key (exec/dropout_mask_impl.h).
uint64_t DropoutKey(const graph::Node& node, const KernelContext& ctx) {
  return dropout::Key(node.name.data(), node.name.size(), ctx.seed, ctx.step);
}

// Training with ratio > 0 keeps (key, threshold) in state.ints[0] for the backward, which
// regenerates the mask instead of storing it.
absl::Status DropoutForward(const FwdArgs& a) {
  const double ratio = std::get<graph::ScalarAttrs>(a.node.attrs).alpha;
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    return NodeError(a.node, absl::StrCat("dropout ratio ", ratio, " must be in [0, 1)"));
  }
  const int64_t n = a.inputs[0].size();
  if (!a.ctx.training || ratio == 0.0) {
    return CopyDevice(a.outputs[0].data, a.inputs[0].data, n, a.ctx.stream);
  }
  const uint64_t key = DropoutKey(a.node, a.ctx);
  const uint32_t threshold = static_cast<uint32_t>(std::lround(ratio * 65536.0));
  a.state.ints.push_back({static_cast<int64_t>(key), threshold});
  TS_CUDA_RETURN_IF_ERROR(LaunchDropout(a.inputs[0].data, a.outputs[0].data, n, key, threshold,
                                        static_cast<float>(1.0 / (1.0 - ratio)), a.ctx.stream));
  return absl::OkStatus();
}

absl::Status DropoutBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  if (a.state.ints.empty()) return CopyDevice(dx.data, dy, dx.size(), a.ctx.stream);
  const double ratio = std::get<graph::ScalarAttrs>(a.node.attrs).alpha;
  TS_CUDA_RETURN_IF_ERROR(LaunchDropout(
      dy, dx.data, dx.size(), static_cast<uint64_t>(a.state.ints[0][0]),
      static_cast<uint32_t>(a.state.ints[0][1]), static_cast<float>(1.0 / (1.0 - ratio)),
      a.ctx.stream));
  return absl::OkStatus();
}

BinaryCode BinaryCodeOf(OpKind kind) {
  switch (kind) {
    case OpKind::kSub: return BinaryCode::kSub;
    case OpKind::kMul: return BinaryCode::kMul;
    case OpKind::kDiv: return BinaryCode::kDiv;
    case OpKind::kPow: return BinaryCode::kPow;
    default: return BinaryCode::kAdd;
  }
}

absl::Status BinaryForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(LaunchBinary(
      BinaryCodeOf(a.node.kind), a.inputs[0].data, BroadcastView(a.inputs[0].shape, out),
      a.inputs[1].data, BroadcastView(a.inputs[1].shape, out), a.outputs[0].data, out,
      a.ctx.stream));
  return absl::OkStatus();
}

// dx from the full-size gradient g: a copy when shapes match, else the broadcast sum.
absl::Status ReduceInto(const graph::Node& node, const float* g, const Dims& out, const Tensor& dx,
                        cudaStream_t stream) {
  if (dx.size() == Count(out)) return CopyDevice(dx.data, g, dx.size(), stream);
  Dims in = out;
  const int shift = out.rank - static_cast<int>(dx.shape.size());
  for (int d = 0; d < out.rank; ++d) in.d[d] = d < shift ? 1 : dx.shape[d - shift];
  TS_CUDA_RETURN_IF_ERROR(LaunchSumToShape(g, out, dx.data, in, stream));
  return absl::OkStatus();
}

absl::Status BinaryBackward(const BwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  const float* dy = GradOut(a, 0);
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation g, Scratch<float>(a.node, a.ctx, Count(out)));
  for (int which = 0; which < 2; ++which) {
    const Tensor& dx = a.grad_inputs[which];
    if (!dx.present()) continue;
    if (dy == nullptr) {
      TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
      continue;
    }
    TS_CUDA_RETURN_IF_ERROR(LaunchBinaryGrad(
        BinaryCodeOf(a.node.kind), which, dy, a.inputs[0].data,
        BroadcastView(a.inputs[0].shape, out), a.inputs[1].data,
        BroadcastView(a.inputs[1].shape, out), a.outputs[0].data, As<float>(g), out,
        a.ctx.stream));
    TS_RETURN_IF_ERROR(ReduceInto(a.node, As<float>(g), out, dx, a.ctx.stream));
  }
  // g must outlive the kernels that read it.
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

absl::Status WhereForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> cond, IntsToHost(a.inputs[0], a.ctx.stream));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation c, UploadInts(a.node, a.ctx, cond));
  TS_CUDA_RETURN_IF_ERROR(LaunchWhere(
      As<const int64_t>(c), BroadcastView(a.inputs[0].shape, out),
      a.inputs[1].data, BroadcastView(a.inputs[1].shape, out), a.inputs[2].data,
      BroadcastView(a.inputs[2].shape, out), a.outputs[0].data, out, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

absl::Status WhereBackward(const BwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, a.outputs[0].shape));
  const float* dy = GradOut(a, 0);
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> cond, IntsToHost(a.inputs[0], a.ctx.stream));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation c, UploadInts(a.node, a.ctx, cond));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation g, Scratch<float>(a.node, a.ctx, Count(out)));
  for (int which = 0; which < 2; ++which) {
    const Tensor& dx = a.grad_inputs[which + 1];
    if (!dx.present()) continue;
    if (dy == nullptr) {
      TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
      continue;
    }
    TS_CUDA_RETURN_IF_ERROR(LaunchWhereGrad(which, As<const int64_t>(c),
                                            BroadcastView(a.inputs[0].shape, out), dy,
                                            As<float>(g), out, a.ctx.stream));
    TS_RETURN_IF_ERROR(ReduceInto(a.node, As<float>(g), out, dx, a.ctx.stream));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaElementwise(OpTable& table) {
  for (OpKind k : {OpKind::kRelu, OpKind::kLeakyRelu, OpKind::kSigmoid, OpKind::kTanh,
                   OpKind::kGelu, OpKind::kErf, OpKind::kSqrt, OpKind::kExp, OpKind::kLog,
                   OpKind::kNeg, OpKind::kReciprocal, OpKind::kAbs, OpKind::kClip}) {
    Slot(table, k) = {&UnaryForward, &UnaryBackward};
  }
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow}) {
    Slot(table, k) = {&BinaryForward, &BinaryBackward};
  }
  Slot(table, OpKind::kDropout) = {&DropoutForward, &DropoutBackward};
  Slot(table, OpKind::kCast) = {&CopyForward, &CopyBackward};
  Slot(table, OpKind::kWhere) = {&WhereForward, &WhereBackward};
}

}  // namespace tessera::exec::cuda
