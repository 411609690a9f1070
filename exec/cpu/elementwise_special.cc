// CPU kernels of the element-wise ops that are not plain arithmetic (see kernels.h for the
// conventions): Dropout (a counter-based random mask), Cast (dtype conversion) and
// Where (selection with broadcasting).
#include <cmath>
#include <limits>

#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/broadcast_impl.h"
#include "tessera/exec/dropout_mask_impl.h"

namespace tessera::exec::cpu {
namespace {

// ---- Dropout --------------------------------------------------------------------------------

// The mask key of this node in this step (exec/dropout_mask_impl.h).
uint64_t DropoutKey(const graph::Node& node, const KernelContext& ctx) {
  return dropout::Key(node.name.data(), node.name.size(), ctx.seed, ctx.step);
}

// The keep bits of mask word w (elements 64w .. 64w+63): one 64-bit hash Mix64(key + k) gives
// four 16-bit uniform draws, and element i is kept when its draw is >= `threshold`.
inline uint64_t DropoutWord(uint64_t key, int64_t w, uint32_t threshold) {
  uint64_t bits = 0;
  for (int k = 0; k < 16; ++k) {
    const uint64_t h = dropout::Draws(key, w, k);
    for (int q = 0; q < 4; ++q) {
      const uint64_t keep = ((h >> (16 * q)) & 0xffff) >= threshold;
      bits |= keep << (4 * k + q);
    }
  }
  return bits;
}

// Training: Y = X * mask / (1 - ratio), mask[i] = 1 with probability 1 - ratio (the ratio
// rounded to a multiple of 2^-16), drawn from a counter-based hash of (key, i): any element, any
// thread, same value. The mask is kept in OpState as packed bits (ints[0], 64 per word). Not
// training, or ratio 0: Y = X and no mask. ratio is ScalarAttrs::alpha, in [0, 1).
template <typename T>
absl::Status DropoutForward(const ForwardArgs<T>& a) {
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[0], "input X"));
  const double ratio = std::get<graph::ScalarAttrs>(a.node.attrs).alpha;
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    return KernelInvalid(a.node, absl::StrCat("dropout ratio ", ratio, " must be in [0, 1)"));
  }
  const T* x = a.inputs[0].data;
  T* y = a.outputs[0].data;
  const int64_t n = a.inputs[0].size();
  if (!a.ctx.training || ratio == 0.0) {
    std::copy(x, x + n, y);
    return absl::OkStatus();
  }
  const uint64_t key = DropoutKey(a.node, a.ctx);
  const uint32_t threshold = static_cast<uint32_t>(std::lround(ratio * 65536.0));
  const T scale = static_cast<T>(1.0 / (1.0 - ratio));
  std::vector<int64_t>& mask = a.state.ints.emplace_back((n + 63) / 64, 0);
  ParallelFor(a.ctx.threads, static_cast<int64_t>(mask.size()), kMinParallelElements / 64,
              [&](int64_t w0, int64_t w1) {
                for (int64_t w = w0; w < w1; ++w) {
                  const uint64_t bits = DropoutWord(key, w, threshold);
                  mask[w] = static_cast<int64_t>(bits);
                  const int64_t end = std::min<int64_t>(64, n - w * 64);
                  const T* xw = x + w * 64;
                  T* yw = y + w * 64;
                  for (int64_t b = 0; b < end; ++b)
                    yw[b] = xw[b] * (scale * static_cast<T>((bits >> b) & 1));
                }
              });
  return absl::OkStatus();
}

template <typename T>
absl::Status DropoutBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  const int64_t n = dx.size();
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + n, T(0));
  } else if (a.state.ints.empty()) {
    std::copy(dy, dy + n, dx.data);  // the forward was the identity
  } else {
    const std::vector<int64_t>& mask = a.state.ints[0];
    const T scale = static_cast<T>(1.0 / (1.0 - std::get<graph::ScalarAttrs>(a.node.attrs).alpha));
    ParallelFor(a.ctx.threads, static_cast<int64_t>(mask.size()), kMinParallelElements / 64,
                [&](int64_t w0, int64_t w1) {
                  for (int64_t w = w0; w < w1; ++w) {
                    const uint64_t bits = static_cast<uint64_t>(mask[w]);
                    const int64_t end = std::min<int64_t>(64, n - w * 64);
                    for (int64_t b = 0; b < end; ++b) {
                      dx.data[w * 64 + b] =
                          dy[w * 64 + b] * (scale * static_cast<T>((bits >> b) & 1));
                    }
                  }
                });
  }
  return absl::OkStatus();
}

// ---- Cast -----------------------------------------------------------------------------------

// Floating -> floating: a copy (all floating tensors compute as T). Integer/bool -> floating:
// the value. Floating -> integer: truncation toward zero; NaN or out of the target's range is
// an error naming the element. Anything -> bool: 1 where non-zero. Integer -> integer: the value
// (narrowing to i32 must fit).
template <typename T>
absl::Status CastForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  const int64_t n = x.size();
  const bool from_float = graph::IsFloating(x.dtype), to_float = graph::IsFloating(y.dtype);
  if (from_float && to_float) {
    std::copy(x.data, x.data + n, y.data);
    return absl::OkStatus();
  }
  if (to_float) {
    for (int64_t i = 0; i < n; ++i) y.data[i] = static_cast<T>(x.index(i));
    return absl::OkStatus();
  }
  const bool to_bool = y.dtype == graph::DType::kBool;
  const double lo = y.dtype == graph::DType::kI32 ? std::numeric_limits<int32_t>::min() : -0x1p63;
  const double hi = y.dtype == graph::DType::kI32 ? std::numeric_limits<int32_t>::max() : 0x1p63;
  for (int64_t i = 0; i < n; ++i) {
    const double v = from_float ? static_cast<double>(x.data[i]) : static_cast<double>(x.index(i));
    if (to_bool) {
      StoreIndex(y, i, v != 0.0 ? 1 : 0);
      continue;
    }
    const double t = std::trunc(v);
    if (!(t >= lo && (y.dtype == graph::DType::kI32 ? t <= hi : t < hi))) {
      return KernelInvalid(a.node, absl::StrCat("element ", i, " is ", v, ", which ",
                                                graph::DTypeName(y.dtype), " cannot hold"));
    }
    StoreIndex(y, i, from_float ? static_cast<int64_t>(t) : x.index(i));
  }
  return absl::OkStatus();
}

// dX = dY for floating -> floating; 0 when the output is not floating (no gradient flows).
template <typename T>
absl::Status CastBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present() || !graph::IsFloating(dx.dtype)) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr || !graph::IsFloating(a.outputs[0].dtype)) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
  } else {
    std::copy(dy, dy + dx.size(), dx.data);
  }
  return absl::OkStatus();
}

// ---- Where ----------------------------------------------------------------------------------

// Y = cond ? X : Y2 with numpy broadcasting of all three; cond is read through Tensor::index().
template <typename T>
absl::Status WhereForward(const ForwardArgs<T>& a) {
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[1], "input X"));
  TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[2], "input Y"));
  const Tensor<T>& cond = a.inputs[0];
  const T* px = a.inputs[1].data;
  const T* py = a.inputs[2].data;
  const Tensor<T>& out = a.outputs[0];
  const StridedLoop<4> loop = MakeStridedLoop<4>(
      out.shape, {DenseStrides(out.shape), BroadcastStrides(cond.shape, out.shape),
                  BroadcastStrides(a.inputs[1].shape, out.shape),
                  BroadcastStrides(a.inputs[2].shape, out.shape)});
  const auto& s = loop.inner_strides;
  ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 4>& at) {
    for (int64_t j = 0; j < loop.inner; ++j) {
      out.data[at[0] + j] =
          cond.index(at[1] + j * s[1]) != 0 ? px[at[2] + j * s[2]] : py[at[3] + j * s[3]];
    }
  });
  return absl::OkStatus();
}

// dX = dY where cond (summed over X's broadcast dims); dY2 = dY where !cond.
template <typename T>
absl::Status WhereBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& cond = a.inputs[0];
  const T* dy = GradOutput(a, 0);
  const graph::Shape& out = a.outputs[0].shape;
  for (int slot = 1; slot <= 2; ++slot) {
    const Tensor<T>& dx = a.grad_inputs[slot];
    if (!dx.present()) continue;
    std::fill(dx.data, dx.data + dx.size(), T(0));
    if (dy == nullptr) continue;
    const bool want = slot == 1;  // X takes the elements where cond holds
    const StridedLoop<3> loop = MakeStridedLoop<3>(
        out,
        {DenseStrides(out), BroadcastStrides(cond.shape, out), BroadcastStrides(dx.shape, out)});
    const int64_t sc = loop.inner_strides[1], sx = loop.inner_strides[2];
    ForEachRun(loop, [&](const std::array<int64_t, 3>& at) {
      for (int64_t j = 0; j < loop.inner; ++j) {
        if ((cond.index(at[1] + j * sc) != 0) == want) dx.data[at[2] + j * sx] += dy[at[0] + j];
      }
    });
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterSpecialKernels(KernelTable<T>& table) {
  using graph::OpKind;
  Slot(table, OpKind::kDropout) = Checked<T, &DropoutForward<T>, &DropoutBackward<T>>();
  Slot(table, OpKind::kCast) = Checked<T, &CastForward<T>, &CastBackward<T>>();
  Slot(table, OpKind::kWhere) = Checked<T, &WhereForward<T>, &WhereBackward<T>>();
}

template void RegisterSpecialKernels<float>(KernelTable<float>&);
template void RegisterSpecialKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
