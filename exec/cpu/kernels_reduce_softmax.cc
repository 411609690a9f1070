// CPU kernels of the reductions (ReduceSum, ReduceMean, ReduceMax over any axes, with or
// without keepdims) and of Softmax/LogSoftmax over one axis. See kernels.h for the conventions.
#include <cmath>
#include <limits>

#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/broadcast_impl.h"

namespace tessera::exec::cpu {
namespace {

// ---- Reductions -----------------------------------------------------------------------------

// X walked with Y alongside: Y's strides are 0 along the reduced axes.
struct ReducePlan {
  StridedLoop<2> loop;  // operand 0: X (dense), operand 1: Y
  int64_t count = 1;    // X elements per Y element
};

absl::StatusOr<ReducePlan> MakeReducePlan(const graph::Node& node, const graph::Shape& in) {
  const auto& attrs = std::get<graph::AxesAttrs>(node.attrs);
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduced(rank, attrs.axes.empty());  // empty axes: all
  for (int64_t axis : attrs.axes) {
    TS_ASSIGN_OR_RETURN(const int64_t d, KernelAxis(node, axis, rank));
    reduced[d] = true;
  }
  graph::Shape kept = in;  // X's shape with 1 on the reduced axes (Y's with keepdims)
  ReducePlan plan;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) continue;
    kept[d] = 1;
    plan.count *= in[d];
  }
  plan.loop = MakeStridedLoop<2>(in, {DenseStrides(in), BroadcastStrides(kept, in)});
  return plan;
}

enum class ReduceKind { kSum, kMean, kMax };

template <typename T, ReduceKind kind>
absl::Status ReduceForward(const ForwardArgs<T>& a) {
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[0], "input X"));
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_ASSIGN_OR_RETURN(const ReducePlan plan, MakeReducePlan(a.node, x.shape));
  if (plan.count == 0 && kind != ReduceKind::kSum && y.size() > 0) {
    return KernelInvalid(a.node, "reduces over an empty axis; its mean or max is undefined");
  }
  const StridedLoop<2>& loop = plan.loop;
  const int64_t sy = loop.inner_strides[1];
  // NaN wins: once an output is NaN, nothing replaces it.
  const auto take = [](T& m, T v) {
    if (!std::isnan(m) && (v > m || std::isnan(v))) m = v;
  };
  const auto run = [&](const std::array<int64_t, 2>& at) {
    const ConstArrayMap<T> px(x.data + at[0], loop.inner);
    T* py = y.data + at[1];
    if (sy == 0) {
      if (kind == ReduceKind::kMax) {
        take(*py, px.template maxCoeff<Eigen::PropagateNaN>());
      } else {
        *py += px.sum();
      }
    } else if (kind == ReduceKind::kMax) {
      for (int64_t j = 0; j < loop.inner; ++j) take(py[j * sy], px[j]);
    } else {
      for (int64_t j = 0; j < loop.inner; ++j) py[j * sy] += px[j];
    }
  };
  std::fill(y.data, y.data + y.size(),
            kind == ReduceKind::kMax ? -std::numeric_limits<T>::infinity() : T(0));
  if (sy == 0 && plan.count == loop.inner) {
    ParallelForEachRun(loop, a.ctx.threads, run);  // each output element is exactly one run
  } else {
    ForEachRun(loop, run);
  }
  if (kind == ReduceKind::kMean) {
    const T scale = T(1) / static_cast<T>(plan.count);
    for (int64_t i = 0; i < y.size(); ++i) y.data[i] *= scale;
  }
  return absl::OkStatus();
}

// Sum: dX = dY broadcast back; Mean: the same over the count; Max: dY shared equally by the
// elements equal to the max (as PyTorch's amax), 0 elsewhere.
template <typename T, ReduceKind kind>
absl::Status ReduceBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
    return absl::OkStatus();
  }
  TS_ASSIGN_OR_RETURN(const ReducePlan plan, MakeReducePlan(a.node, dx.shape));
  const StridedLoop<2>& loop = plan.loop;
  const int64_t sy = loop.inner_strides[1];
  if (kind != ReduceKind::kMax) {
    const T scale = kind == ReduceKind::kMean ? T(1) / static_cast<T>(plan.count) : T(1);
    ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 2>& at) {
      for (int64_t j = 0; j < loop.inner; ++j) dx.data[at[0] + j] = dy[at[1] + j * sy] * scale;
    });
    return absl::OkStatus();
  }
  const T* x = a.inputs[0].data;
  const T* y = a.outputs[0].data;
  std::vector<T> ties(a.outputs[0].size(), T(0));
  ForEachRun(loop, [&](const std::array<int64_t, 2>& at) {
    for (int64_t j = 0; j < loop.inner; ++j) {
      if (x[at[0] + j] == y[at[1] + j * sy]) ties[at[1] + j * sy] += T(1);
    }
  });
  ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 2>& at) {
    for (int64_t j = 0; j < loop.inner; ++j) {
      const int64_t o = at[1] + j * sy;
      dx.data[at[0] + j] = x[at[0] + j] == y[o] ? dy[o] / ties[o] : T(0);
    }
  });
  return absl::OkStatus();
}

// ---- Softmax and LogSoftmax -----------------------------------------------------------------

// X seen as [outer, n, inner] around the softmax axis.
struct SoftmaxView {
  int64_t outer = 1, n = 1, inner = 1;
};

absl::StatusOr<SoftmaxView> MakeSoftmaxView(const graph::Node& node, const graph::Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      KernelAxis(node, std::get<graph::AxisAttrs>(node.attrs).axis, rank));
  SoftmaxView v;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) v.outer *= shape[d];
    if (d == axis) v.n = shape[d];
    if (d > axis) v.inner *= shape[d];
  }
  return v;
}

// One [n, inner] block: y = softmax (or log-softmax) of x along n, stabilised by the max.
// m and s are scratch of `inner` values. inner == 1 is one contiguous row; otherwise the n rows
// of `inner` values are combined element-wise (vectorised along inner).
template <typename T, bool log>
void SoftmaxBlock(const T* x, T* y, int64_t n, int64_t inner, std::vector<T>& m,
                  std::vector<T>& s) {
  if (inner == 1) {
    const ConstArrayMap<T> row(x, n);
    ArrayMap<T> out(y, n);
    const T max = row.maxCoeff();
    out = (row - max).exp();
    const T sum = out.sum();
    if (log) {
      out = row - (max + std::log(sum));
    } else {
      out *= T(1) / sum;
    }
    return;
  }
  ArrayMap<T> mm(m.data(), inner), ss(s.data(), inner);
  const auto x_row = [&](int64_t i) { return ConstArrayMap<T>(x + i * inner, inner); };
  const auto y_row = [&](int64_t i) { return ArrayMap<T>(y + i * inner, inner); };
  mm = x_row(0);
  for (int64_t i = 1; i < n; ++i) mm = mm.max(x_row(i));
  ss.setZero();
  for (int64_t i = 0; i < n; ++i) {
    y_row(i) = (x_row(i) - mm).exp();
    ss += y_row(i);
  }
  if (log) {
    ss = mm + ss.log();
    for (int64_t i = 0; i < n; ++i) y_row(i) = x_row(i) - ss;
  } else {
    ss = ss.inverse();
    for (int64_t i = 0; i < n; ++i) y_row(i) *= ss;
  }
}

template <typename T, bool log>
absl::Status SoftmaxForward(const ForwardArgs<T>& a) {
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[0], "input X"));
  TS_ASSIGN_OR_RETURN(const SoftmaxView v, MakeSoftmaxView(a.node, a.inputs[0].shape));
  if (v.n == 0 || v.inner == 0) return absl::OkStatus();  // no elements
  const T* x = a.inputs[0].data;
  T* y = a.outputs[0].data;
  const int64_t block = v.n * v.inner;
  ParallelFor(a.ctx.threads, v.outer,
              std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(block, 1)),
              [&](int64_t o0, int64_t o1) {
                std::vector<T> m(v.inner), s(v.inner);
                for (int64_t o = o0; o < o1; ++o) {
                  SoftmaxBlock<T, log>(x + o * block, y + o * block, v.n, v.inner, m, s);
                }
              });
  return absl::OkStatus();
}

// Softmax: dX = Y * (dY - sum_n dY * Y). LogSoftmax: dX = dY - exp(Y) * sum_n dY. Reads Y only.
template <typename T, bool log>
void SoftmaxGradBlock(const T* y, const T* dy, T* dx, int64_t n, int64_t inner, std::vector<T>& s) {
  if (inner == 1) {
    const ConstArrayMap<T> yy(y, n), gy(dy, n);
    ArrayMap<T> gx(dx, n);
    if (log) {
      gx = gy - yy.exp() * gy.sum();
    } else {
      gx = yy * (gy - (gy * yy).sum());
    }
    return;
  }
  ArrayMap<T> ss(s.data(), inner);
  const auto row = [&](const T* p, int64_t i) { return ConstArrayMap<T>(p + i * inner, inner); };
  ss.setZero();
  for (int64_t i = 0; i < n; ++i) {
    if (log) {
      ss += row(dy, i);
    } else {
      ss += row(dy, i) * row(y, i);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    ArrayMap<T> gx(dx + i * inner, inner);
    if (log) {
      gx = row(dy, i) - row(y, i).exp() * ss;
    } else {
      gx = row(y, i) * (row(dy, i) - ss);
    }
  }
}

template <typename T, bool log>
absl::Status SoftmaxBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
    return absl::OkStatus();
  }
  TS_ASSIGN_OR_RETURN(const SoftmaxView v, MakeSoftmaxView(a.node, dx.shape));
  if (v.n == 0 || v.inner == 0) return absl::OkStatus();
  const T* y = a.outputs[0].data;
  const int64_t block = v.n * v.inner;
  ParallelFor(a.ctx.threads, v.outer,
              std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(block, 1)),
              [&](int64_t o0, int64_t o1) {
                std::vector<T> s(v.inner);
                for (int64_t o = o0; o < o1; ++o) {
                  const int64_t at = o * block;
                  SoftmaxGradBlock<T, log>(y + at, dy + at, dx.data + at, v.n, v.inner, s);
                }
              });
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterReduceSoftmaxKernels(KernelTable<T>& table) {
  using graph::OpKind;
  Slot(table, OpKind::kReduceSum) =
      Checked<T, &ReduceForward<T, ReduceKind::kSum>, &ReduceBackward<T, ReduceKind::kSum>>();
  Slot(table, OpKind::kReduceMean) =
      Checked<T, &ReduceForward<T, ReduceKind::kMean>, &ReduceBackward<T, ReduceKind::kMean>>();
  Slot(table, OpKind::kReduceMax) =
      Checked<T, &ReduceForward<T, ReduceKind::kMax>, &ReduceBackward<T, ReduceKind::kMax>>();
  Slot(table, OpKind::kSoftmax) =
      Checked<T, &SoftmaxForward<T, false>, &SoftmaxBackward<T, false>>();
  Slot(table, OpKind::kLogSoftmax) =
      Checked<T, &SoftmaxForward<T, true>, &SoftmaxBackward<T, true>>();
}

template void RegisterReduceSoftmaxKernels<float>(KernelTable<float>&);
template void RegisterReduceSoftmaxKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
