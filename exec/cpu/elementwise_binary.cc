// CPU kernels of the binary element-wise ops with numpy broadcasting (see kernels.h for the
// conventions): Add, Sub, Mul, Div, Pow.
//
// Forward walks Y, A and B together (broadcast operands with stride 0). Backward computes each
// wanted operand gradient dY * dY/dOperand element by element; an operand that was broadcast
// gets the sum over the broadcast dims. Each backward reads only what docs/estimates.md says
// the op keeps (Add/Sub: nothing; Mul: the other operand; Div: B, and Y for dB; Pow: A, B, Y).
#include <cmath>

#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/broadcast_impl.h"

namespace tessera::exec::cpu {
namespace {

// What a gradient formula reads besides dY.
enum Reads : unsigned { kReadsA = 1, kReadsB = 2, kReadsY = 4 };

template <typename T>
struct AddOp {
  static constexpr unsigned kGradAReads = 0, kGradBReads = 0;
  static T F(T a, T b) { return a + b; }
  static T GradA(T dy, T, T, T) { return dy; }
  static T GradB(T dy, T, T, T) { return dy; }
};

template <typename T>
struct SubOp {
  static constexpr unsigned kGradAReads = 0, kGradBReads = 0;
  static T F(T a, T b) { return a - b; }
  static T GradA(T dy, T, T, T) { return dy; }
  static T GradB(T dy, T, T, T) { return -dy; }
};

template <typename T>
struct MulOp {
  static constexpr unsigned kGradAReads = kReadsB, kGradBReads = kReadsA;
  static T F(T a, T b) { return a * b; }
  static T GradA(T dy, T, T b, T) { return dy * b; }
  static T GradB(T dy, T a, T, T) { return dy * a; }
};

// dA = dY / B; dB = -dY * Y / B.
template <typename T>
struct DivOp {
  static constexpr unsigned kGradAReads = kReadsB, kGradBReads = kReadsB | kReadsY;
  static T F(T a, T b) { return a / b; }
  static T GradA(T dy, T, T b, T) { return dy / b; }
  static T GradB(T dy, T, T b, T y) { return -dy * y / b; }
};

// dA = dY * B * A^(B-1); dB = dY * Y * log(A) where A > 0, and 0 where A <= 0 (the real power
// has no derivative in B there; PyTorch gives 0 at A = 0 and NaN for A < 0).
template <typename T>
struct PowOp {
  static constexpr unsigned kGradAReads = kReadsA | kReadsB, kGradBReads = kReadsA | kReadsY;
  static T F(T a, T b) { return std::pow(a, b); }
  static T GradA(T dy, T a, T b, T) { return b == T(0) ? T(0) : dy * b * std::pow(a, b - T(1)); }
  static T GradB(T dy, T a, T, T y) { return a > T(0) ? dy * y * std::log(a) : T(0); }
};

// Y = F(A, B) over one run: y contiguous, a and b with strides sa, sb (0 or 1 for dense inputs).
template <typename T, typename Op>
void ForwardRun(T* y, const T* a, int64_t sa, const T* b, int64_t sb, int64_t n) {
  if (sa == 1 && sb == 1) {
    for (int64_t j = 0; j < n; ++j) y[j] = Op::F(a[j], b[j]);
  } else if (sa == 1 && sb == 0) {
    const T bv = *b;
    for (int64_t j = 0; j < n; ++j) y[j] = Op::F(a[j], bv);
  } else if (sa == 0 && sb == 1) {
    const T av = *a;
    for (int64_t j = 0; j < n; ++j) y[j] = Op::F(av, b[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = Op::F(a[j * sa], b[j * sb]);
  }
}

template <typename T, typename Op>
absl::Status BinaryForward(const ForwardArgs<T>& a) {
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[0], "input A"));
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[1], "input B"));
  const Tensor<T>& in_a = a.inputs[0];
  const Tensor<T>& in_b = a.inputs[1];
  const Tensor<T>& out = a.outputs[0];
  const int64_t n = out.size();
  // Fast path: each operand is either the full shape or a single value.
  const bool a_flat = in_a.size() == n || in_a.size() == 1;
  const bool b_flat = in_b.size() == n || in_b.size() == 1;
  if (a_flat && b_flat) {
    const int64_t sa = in_a.size() == n ? 1 : 0, sb = in_b.size() == n ? 1 : 0;
    ParallelFor(a.ctx.threads, n, kMinParallelElements, [&](int64_t b, int64_t e) {
      ForwardRun<T, Op>(out.data + b, in_a.data + b * sa, sa, in_b.data + b * sb, sb, e - b);
    });
    return absl::OkStatus();
  }
  const StridedLoop<3> loop = MakeStridedLoop<3>(
      out.shape, {DenseStrides(out.shape), BroadcastStrides(in_a.shape, out.shape),
                  BroadcastStrides(in_b.shape, out.shape)});
  ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 3>& at) {
    ForwardRun<T, Op>(out.data + at[0], in_a.data + at[1], loop.inner_strides[1], in_b.data + at[2],
                      loop.inner_strides[2], loop.inner);
  });
  return absl::OkStatus();
}

// dX (operand `which`, 0 = A, 1 = B) from dY over the whole output: written where the operand
// has the output's shape, summed over the broadcast dims where it does not.
template <typename T, typename Op, int which>
void OperandGrad(const BackwardArgs<T>& a, const T* dy) {
  constexpr unsigned reads = which == 0 ? Op::kGradAReads : Op::kGradBReads;
  const Tensor<T>& dx = a.grad_inputs[which];
  const T* pa = a.inputs[0].data;
  const T* pb = a.inputs[1].data;
  const T* py = a.outputs[0].data;
  // The gradient contribution of output element i (operand offsets ia, ib).
  const auto grad = [&](int64_t i, int64_t ia, int64_t ib) {
    const T av = (reads & kReadsA) ? pa[ia] : T(0);
    const T bv = (reads & kReadsB) ? pb[ib] : T(0);
    const T yv = (reads & kReadsY) ? py[i] : T(0);
    return which == 0 ? Op::GradA(dy[i], av, bv, yv) : Op::GradB(dy[i], av, bv, yv);
  };
  const int64_t n = a.outputs[0].size();
  const int64_t size_a = a.inputs[0].size(), size_b = a.inputs[1].size();
  if (dx.size() == n && (size_a == n || size_a == 1) && (size_b == n || size_b == 1)) {
    // Fast path: dX has the output's shape; the operands are full or single values.
    const int64_t sa = size_a == n ? 1 : 0, sb = size_b == n ? 1 : 0;
    ParallelFor(a.ctx.threads, n, kMinParallelElements, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dx.data[i] = grad(i, i * sa, i * sb);
    });
    return;
  }
  const graph::Shape& out = a.outputs[0].shape;
  const bool full = dx.size() == n;  // every element of dX is written exactly once
  if (!full) std::fill(dx.data, dx.data + dx.size(), T(0));
  const StridedLoop<4> loop = MakeStridedLoop<4>(
      out, {DenseStrides(out), BroadcastStrides(a.inputs[0].shape, out),
            BroadcastStrides(a.inputs[1].shape, out), BroadcastStrides(dx.shape, out)});
  const int64_t sa = loop.inner_strides[1], sb = loop.inner_strides[2], sx = loop.inner_strides[3];
  const auto run = [&](const std::array<int64_t, 4>& at) {
    T* px = dx.data + at[3];
    if (sx == 0) {
      T sum = 0;
      for (int64_t j = 0; j < loop.inner; ++j)
        sum += grad(at[0] + j, at[1] + j * sa, at[2] + j * sb);
      *px += sum;
    } else if (full) {
      for (int64_t j = 0; j < loop.inner; ++j)
        px[j * sx] = grad(at[0] + j, at[1] + j * sa, at[2] + j * sb);
    } else {
      for (int64_t j = 0; j < loop.inner; ++j)
        px[j * sx] += grad(at[0] + j, at[1] + j * sa, at[2] + j * sb);
    }
  };
  if (full) {
    ParallelForEachRun(loop, a.ctx.threads, run);
  } else {
    ForEachRun(loop, run);  // accumulates into elements shared by several runs
  }
}

template <typename T, typename Op>
absl::Status BinaryBackward(const BackwardArgs<T>& a) {
  const T* dy = GradOutput(a, 0);
  for (int which = 0; which < 2; ++which) {
    const Tensor<T>& dx = a.grad_inputs[which];
    if (!dx.present()) continue;
    if (dy == nullptr) {
      std::fill(dx.data, dx.data + dx.size(), T(0));
    } else if (which == 0) {
      OperandGrad<T, Op, 0>(a, dy);
    } else {
      OperandGrad<T, Op, 1>(a, dy);
    }
  }
  return absl::OkStatus();
}

template <typename T, template <typename> class Op>
void Register(KernelTable<T>& table, graph::OpKind kind) {
  Slot(table, kind) = Checked<T, &BinaryForward<T, Op<T>>, &BinaryBackward<T, Op<T>>>();
}

}  // namespace

template <typename T>
void RegisterBinaryKernels(KernelTable<T>& table) {
  using graph::OpKind;
  Register<T, AddOp>(table, OpKind::kAdd);
  Register<T, SubOp>(table, OpKind::kSub);
  Register<T, MulOp>(table, OpKind::kMul);
  Register<T, DivOp>(table, OpKind::kDiv);
  Register<T, PowOp>(table, OpKind::kPow);
}

template void RegisterBinaryKernels<float>(KernelTable<float>&);
template void RegisterBinaryKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
