// CPU kernels of the unary element-wise ops (see kernels.h for the conventions): LeakyRelu,
// Sigmoid, Tanh, Gelu (erf form), Erf, Sqrt, Exp, Log, Neg, Reciprocal, Abs, Clip.
//
// Each op is a small struct with an Eigen forward (y from x) and backward (dx from x, y, dy);
// UnaryForward/UnaryBackward split the tensor over threads and call it on each segment.
#include <cmath>

#include <unsupported/Eigen/SpecialFunctions>

#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/elementwise_impl.h"

namespace tessera::exec::cpu {
namespace {

template <typename T>
using CMap = ConstArrayMap<T>;
template <typename T>
using AMap = ArrayMap<T>;

// Y = X if X > 0 else alpha * X.
template <typename T>
struct LeakyReluOp {
  T alpha;
  explicit LeakyReluOp(const graph::Node& n)
      : alpha(static_cast<T>(std::get<graph::ScalarAttrs>(n.attrs).alpha)) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = (x > T(0)).select(x, x * alpha); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const {
    dx = (x > T(0)).select(dy, dy * alpha);
  }
};

// Y = 1 / (1 + exp(-X)); dX = dY * Y * (1 - Y).
template <typename T>
struct SigmoidOp {
  explicit SigmoidOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.logistic(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = dy * y * (T(1) - y); }
};

// dX = dY * (1 - Y^2).
template <typename T>
struct TanhOp {
  explicit TanhOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.tanh(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const {
    dx = dy * (T(1) - y.square());
  }
};

// Y = X/2 * (1 + erf(X/sqrt 2)); dX = dY * (Phi(X) + X * phi(X)), phi the normal density.
template <typename T>
struct GeluOp {
  explicit GeluOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = T(0.5) * x * (T(1) + (x * T(M_SQRT1_2)).erf()); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const {
    const T inv_sqrt_2pi = T(0.5 * M_2_SQRTPI * M_SQRT1_2);
    dx = dy * (T(0.5) * (T(1) + (x * T(M_SQRT1_2)).erf()) +
               x * (x.square() * T(-0.5)).exp() * inv_sqrt_2pi);
  }
};

// dX = dY * 2/sqrt(pi) * exp(-X^2).
template <typename T>
struct ErfOp {
  explicit ErfOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.erf(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const {
    dx = dy * (-x.square()).exp() * T(M_2_SQRTPI);
  }
};

// dX = dY / (2 Y).
template <typename T>
struct SqrtOp {
  explicit SqrtOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.sqrt(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = T(0.5) * dy / y; }
};

// dX = dY * Y.
template <typename T>
struct ExpOp {
  explicit ExpOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.exp(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = dy * y; }
};

// dX = dY / X.
template <typename T>
struct LogOp {
  explicit LogOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.log(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = dy / x; }
};

template <typename T>
struct NegOp {
  explicit NegOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = -x; }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = -dy; }
};

// Y = 1 / X; dX = -dY * Y^2.
template <typename T>
struct ReciprocalOp {
  explicit ReciprocalOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.inverse(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = -dy * y.square(); }
};

// dX = dY * sign(X) (0 at X = 0).
template <typename T>
struct AbsOp {
  explicit AbsOp(const graph::Node&) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.abs(); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const { dx = dy * x.sign(); }
};

// Y = min(max(X, lo), hi) (numpy: hi wins when lo > hi); dX = dY where lo <= X <= hi, as
// PyTorch's clamp. lo/hi are ScalarAttrs alpha/beta, +-inf for an absent bound.
template <typename T>
struct ClipOp {
  T lo, hi;
  explicit ClipOp(const graph::Node& n)
      : lo(static_cast<T>(std::get<graph::ScalarAttrs>(n.attrs).alpha)),
        hi(static_cast<T>(std::get<graph::ScalarAttrs>(n.attrs).beta)) {}
  void Forward(CMap<T> x, AMap<T> y) const { y = x.max(lo).min(hi); }
  void Backward(CMap<T> x, CMap<T> y, CMap<T> dy, AMap<T> dx) const {
    dx = ((x >= lo) && (x <= hi)).select(dy, T(0));
  }
};

template <typename T, template <typename> class Op>
absl::Status UnaryForward(const ForwardArgs<T>& a) {
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[0], "input X"));
  const Op<T> op(a.node);
  const T* x = a.inputs[0].data;
  T* y = a.outputs[0].data;
  ParallelFor(a.ctx.threads, a.inputs[0].size(), kMinParallelElements, [&](int64_t b, int64_t e) {
    op.Forward(CMap<T>(x + b, e - b), AMap<T>(y + b, e - b));
  });
  return absl::OkStatus();
}

template <typename T, template <typename> class Op>
absl::Status UnaryBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  const int64_t n = dx.size();
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + n, T(0));
    return absl::OkStatus();
  }
  const Op<T> op(a.node);
  const T* x = a.inputs[0].data;
  const T* y = a.outputs[0].data;
  // X or Y may be absent (nullptr) when this op's backward does not keep it.
  const auto seg = [](const T* p, int64_t b, int64_t e) {
    return CMap<T>(p == nullptr ? nullptr : p + b, e - b);
  };
  ParallelFor(a.ctx.threads, n, kMinParallelElements, [&](int64_t b, int64_t e) {
    op.Backward(seg(x, b, e), seg(y, b, e), seg(dy, b, e), AMap<T>(dx.data + b, e - b));
  });
  return absl::OkStatus();
}

template <typename T, template <typename> class Op>
void Register(KernelTable<T>& table, graph::OpKind kind) {
  Slot(table, kind) = Checked<T, &UnaryForward<T, Op>, &UnaryBackward<T, Op>>();
}

}  // namespace

template <typename T>
void RegisterUnaryMathKernels(KernelTable<T>& table) {
  using graph::OpKind;
  Register<T, LeakyReluOp>(table, OpKind::kLeakyRelu);
  Register<T, SigmoidOp>(table, OpKind::kSigmoid);
  Register<T, TanhOp>(table, OpKind::kTanh);
  Register<T, GeluOp>(table, OpKind::kGelu);
  Register<T, ErfOp>(table, OpKind::kErf);
  Register<T, SqrtOp>(table, OpKind::kSqrt);
  Register<T, ExpOp>(table, OpKind::kExp);
  Register<T, LogOp>(table, OpKind::kLog);
  Register<T, NegOp>(table, OpKind::kNeg);
  Register<T, ReciprocalOp>(table, OpKind::kReciprocal);
  Register<T, AbsOp>(table, OpKind::kAbs);
  Register<T, ClipOp>(table, OpKind::kClip);
}

template void RegisterUnaryMathKernels<float>(KernelTable<float>&);
template void RegisterUnaryMathKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
