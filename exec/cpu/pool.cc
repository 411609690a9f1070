// CPU kernels of the pooling half of the ConvPool family (see kernels.h for the conventions):
// MaxPool, AveragePool, GlobalAveragePool.
//
// A pooling window is separable: along each spatial axis, output o covers the input range
// [lo[o], hi[o]) clipped to X (AxisRanges), and its window is the product of those ranges. The
// ranges are computed once per call (a few values per axis); images (rank 2, and rank 1 as a
// 1 x W image) run a plain double loop over each window, other ranks an odometer over its box.
// Each (n, c) plane is independent, so planes are split across KernelContext::threads.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "tessera/exec/cpu/conv_impl.h"
#include "tessera/exec/cpu/elementwise_impl.h"
#include "tessera/exec/cpu/kept_array_impl.h"

namespace tessera::exec::cpu {
namespace {

// A pooling window's geometry, with a leading unit axis added to rank-1 windows so that images
// and sequences share the rank-2 loop.
struct PoolGeometry {
  Window w;
  std::vector<AxisRanges> axes;  // one per spatial axis of `w`

  int64_t planes = 0;  // N * C
};

PoolGeometry MakePoolGeometry(const graph::Node& node, const graph::Shape& x,
                              const graph::Shape& y) {
  const auto& a = std::get<graph::PoolAttrs>(node.attrs);
  PoolGeometry g{.w = MakeWindow(x, y, a.kernel_shape, a.strides, a.pads, {}),
                 .planes = x[0] * x[1]};
  if (g.w.rank() == 1) {
    for (auto* v : {&g.w.in, &g.w.out, &g.w.kernel, &g.w.stride, &g.w.dilation})
      v->insert(v->begin(), 1);
    g.w.pad_begin.insert(g.w.pad_begin.begin(), 0);
    g.w.pad_end.insert(g.w.pad_end.begin(), 0);
  }
  for (size_t d = 0; d < g.w.rank(); ++d) g.axes.push_back(ClippedRanges(g.w, d));
  return g;
}

// One output's window: the offset of its first point inside X (when there is one), the count
// of its points inside X, and that count with the pads (count_include_pad).
struct WindowInfo {
  int64_t first = 0, inside = 0, padded = 0;
};

// Calls out(i, points, info) for every output i of a plane, in order, where points(f) calls
// f(offset) for every point of i's window in row-major order (the order arg-max ties follow).
template <typename Out>
void ForEachWindow(const PoolGeometry& g, Out&& out) {
  const Window& w = g.w;
  const size_t s = w.rank();
  if (s == 2) {
    const AxisRanges& rows = g.axes[0];
    const AxisRanges& cols = g.axes[1];
    const int64_t in_w = w.in[1];
    int64_t i = 0;
    for (int64_t oh = 0; oh < w.out[0]; ++oh) {
      const int64_t h0 = rows.lo[oh], h1 = rows.hi[oh];
      for (int64_t ow = 0; ow < w.out[1]; ++ow, ++i) {
        const int64_t w0 = cols.lo[ow], w1 = cols.hi[ow];
        const auto points = [&](auto&& f) {
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t c = w0; c < w1; ++c) f(h * in_w + c);
        };
        out(i, points,
            WindowInfo{h0 * in_w + w0, (h1 - h0) * (w1 - w0), rows.padded[oh] * cols.padded[ow]});
      }
    }
    return;
  }
  std::vector<int64_t> o(s), lo(s), hi(s), idx(s);
  for (int64_t i = 0; i < w.out_size; ++i) {
    Unravel(i, w.out, o);
    WindowInfo info{0, 1, 1};
    for (size_t d = 0; d < s; ++d) {
      info.first = info.first * w.in[d] + g.axes[d].lo[o[d]];
      lo[d] = g.axes[d].lo[o[d]];
      hi[d] = g.axes[d].hi[o[d]];
      info.inside *= hi[d] - lo[d];
      info.padded *= g.axes[d].padded[o[d]];
    }
    const auto points = [&](auto&& f) {
      if (info.inside == 0) return;
      idx = lo;
      for (;;) {  // odometer over the box; the last axis is the inner loop
        int64_t base = 0;
        for (size_t d = 0; d + 1 < s; ++d) base = base * w.in[d] + idx[d];
        base *= w.in[s - 1];
        for (int64_t c = lo[s - 1]; c < hi[s - 1]; ++c) f(base + c);
        size_t d = s - 1;
        for (;;) {
          if (d == 0) return;
          --d;
          if (++idx[d] < hi[d]) break;
          idx[d] = lo[d];
        }
      }
    };
    out(i, points, info);
  }
}

// Calls fn(plane) for every (n, c) plane, planes split across threads.
template <typename F>
void ForEachPlane(const PoolGeometry& g, int threads, const F& fn) {
  const int64_t per_part =
      std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(g.w.in_size + g.w.out_size, 1));
  ParallelFor(threads, g.planes, per_part, [&](int64_t begin, int64_t end) {
    for (int64_t pl = begin; pl < end; ++pl) fn(pl);
  });
}

// ----- MaxPool -------------------------------------------------------------------------------

// Y = max over the window's points inside X (padding never wins; the first maximum in row-major
// order on ties, a NaN first point stays). The arg-max's offset in its (n, c) plane is kept for
// backward (-1: empty window, Y = 0): as int32 in state.reals[0] (KeepArray), or as int64 in
// state.ints[0] when a plane has 2^31 points or more.

// The max and arg-max of the rank-2 window [h0, h1) x [w0, w1) of a plane.
template <typename T, typename Index>
void MaxWindow(const T* xp, int64_t in_w, int64_t h0, int64_t h1, int64_t w0, int64_t w1, T& y,
               Index& arg) {
  if (h0 >= h1 || w0 >= w1) {
    y = T(0);
    arg = -1;
    return;
  }
  // Start from the first point; `>` keeps it on ties and when it is a NaN.
  int64_t best_off = h0 * in_w + w0;
  T best = xp[best_off];
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t c = w0; c < w1; ++c) {
      const T v = xp[h * in_w + c];
      if (v > best) {
        best = v;
        best_off = h * in_w + c;
      }
    }
  y = best;
  arg = static_cast<Index>(best_off);
}

// MaxWindow for the outputs [begin, end) of one output row whose KH x KW windows lie wholly
// inside X (rows from h0, columns from ow * stride - pad): a fixed, branch-free loop.
template <int KH, int KW, typename T, typename Index>
void MaxFullWindows(const T* xp, int64_t in_w, int64_t h0, int64_t stride, int64_t pad,
                    int64_t begin, int64_t end, T* y, Index* arg) {
  for (int64_t ow = begin; ow < end; ++ow) {
    const int64_t first = h0 * in_w + ow * stride - pad;
    T best = xp[first];
    int64_t best_off = first;
    for (int kh = 0; kh < KH; ++kh)
      for (int kw = (kh == 0 ? 1 : 0); kw < KW; ++kw) {
        const int64_t off = first + kh * in_w + kw;
        const T v = xp[off];
        const bool greater = v > best;
        best = greater ? v : best;
        best_off = greater ? off : best_off;
      }
    y[ow] = best;
    arg[ow] = static_cast<Index>(best_off);
  }
}

template <typename T, typename Index>
using FullWindowsFn = void (*)(const T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, T*,
                               Index*);

// MaxFullWindows for kernels up to 3 x 3, else nullptr.
template <typename T, typename Index>
FullWindowsFn<T, Index> FullWindowsFor(int64_t kh, int64_t kw) {
  static constexpr FullWindowsFn<T, Index> kTable[3][3] = {
      {&MaxFullWindows<1, 1, T, Index>, &MaxFullWindows<1, 2, T, Index>,
       &MaxFullWindows<1, 3, T, Index>},
      {&MaxFullWindows<2, 1, T, Index>, &MaxFullWindows<2, 2, T, Index>,
       &MaxFullWindows<2, 3, T, Index>},
      {&MaxFullWindows<3, 1, T, Index>, &MaxFullWindows<3, 2, T, Index>,
       &MaxFullWindows<3, 3, T, Index>}};
  return kh >= 1 && kh <= 3 && kw >= 1 && kw <= 3 ? kTable[kh - 1][kw - 1] : nullptr;
}

// The outputs [first, second) along axis d whose windows lie wholly inside X.
std::pair<int64_t, int64_t> InteriorOutputs(const Window& w, size_t d) {
  const int64_t stride = w.stride[d], pad = w.pad_begin[d];
  const int64_t begin = std::min((pad + stride - 1) / stride, w.out[d]);
  const int64_t last_start = w.in[d] - w.kernel[d] + pad;  // with the pads, the last that fits
  if (last_start < 0) return {begin, begin};
  return {begin, std::clamp(last_start / stride + 1, begin, w.out[d])};
}

// One plane of a rank-2 MaxPool: full windows of small kernels take MaxFullWindows, the border
// (windows clipped by the pads or a ceil_mode overhang) MaxWindow.
template <typename T, typename Index>
void MaxPoolPlane2D(const PoolGeometry& g, const T* xp, T* yp, Index* ap) {
  const Window& w = g.w;
  const AxisRanges& rows = g.axes[0];
  const AxisRanges& cols = g.axes[1];
  const int64_t in_w = w.in[1], out_w = w.out[1];
  const FullWindowsFn<T, Index> full = FullWindowsFor<T, Index>(w.kernel[0], w.kernel[1]);
  const auto [ow_begin, ow_end] = InteriorOutputs(w, 1);
  for (int64_t oh = 0; oh < w.out[0]; ++oh) {
    const int64_t h0 = rows.lo[oh], h1 = rows.hi[oh];
    T* y_row = yp + oh * out_w;
    Index* arg_row = ap + oh * out_w;
    const auto border = [&](int64_t begin, int64_t end) {
      for (int64_t ow = begin; ow < end; ++ow)
        MaxWindow(xp, in_w, h0, h1, cols.lo[ow], cols.hi[ow], y_row[ow], arg_row[ow]);
    };
    if (full == nullptr || h1 - h0 != w.kernel[0] || ow_begin >= ow_end) {
      border(0, out_w);
      continue;
    }
    border(0, ow_begin);
    full(xp, in_w, h0, w.stride[1], w.pad_begin[1], ow_begin, ow_end, y_row, arg_row);
    border(ow_end, out_w);
  }
}

template <typename T, typename Index>
void MaxPoolPlanes(const PoolGeometry& g, int threads, const T* x, T* y, Index* arg) {
  const int64_t in_size = g.w.in_size, out_size = g.w.out_size;
  ForEachPlane(g, threads, [&](int64_t pl) {
    const T* xp = x + pl * in_size;
    T* yp = y + pl * out_size;
    Index* ap = arg + pl * out_size;
    if (g.w.rank() == 2) {
      MaxPoolPlane2D(g, xp, yp, ap);
      return;
    }
    ForEachWindow(g, [&](int64_t i, const auto& points, WindowInfo info) {
      Index best = -1;
      T best_value = T(0);
      if (info.inside > 0) {  // as in MaxWindow
        best = static_cast<Index>(info.first);
        best_value = xp[info.first];
        points([&](int64_t off) {
          if (xp[off] > best_value) {
            best = static_cast<Index>(off);
            best_value = xp[off];
          }
        });
      }
      ap[i] = best;
      yp[i] = best_value;
    });
  });
}

template <typename T, typename Index>
void MaxPoolRoute(const PoolGeometry& g, int threads, const Index* arg, const T* dy, T* dx) {
  const int64_t in_size = g.w.in_size, out_size = g.w.out_size;
  ForEachPlane(g, threads, [&](int64_t pl) {
    T* dxp = dx + pl * in_size;
    std::fill(dxp, dxp + in_size, T(0));
    if (dy == nullptr) return;
    const Index* ap = arg + pl * out_size;
    const T* dyp = dy + pl * out_size;
    for (int64_t i = 0; i < out_size; ++i)
      if (ap[i] >= 0) dxp[ap[i]] += dyp[i];
  });
}

template <typename T>
absl::Status MaxPoolForward(const ForwardArgs<T>& a) {
  const PoolGeometry g = MakePoolGeometry(a.node, a.inputs[0].shape, a.outputs[0].shape);
  const int64_t n = g.planes * g.w.out_size;
  const T* x = a.inputs[0].data;
  T* y = a.outputs[0].data;
  if (g.w.in_size <= std::numeric_limits<int32_t>::max()) {
    MaxPoolPlanes(g, a.ctx.threads, x, y, KeepArray<int32_t>(a.state.reals.emplace_back(), n));
  } else {
    MaxPoolPlanes(g, a.ctx.threads, x, y, a.state.ints.emplace_back(n).data());
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status MaxPoolBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const PoolGeometry g = MakePoolGeometry(a.node, a.inputs[0].shape, a.outputs[0].shape);
  const T* dy = a.grad_outputs[0].data;
  if (!a.state.reals.empty()) {
    MaxPoolRoute(g, a.ctx.threads, KeptArray<int32_t>(a.state.reals[0]), dy, dx.data);
  } else {
    MaxPoolRoute(g, a.ctx.threads, a.state.ints.at(0).data(), dy, dx.data);
  }
  return absl::OkStatus();
}

// ----- AveragePool ---------------------------------------------------------------------------

// The window's sum over X divided by its divisor: the points inside X, or with
// count_include_pad those plus the pads (at least 1); backward spreads dY / divisor over the same
// points.
template <typename T, bool kBackward>
void AveragePoolImpl(const graph::Node& node, int threads, const graph::Shape& xs,
                     const graph::Shape& ys, T* x, const T* y_in, T* y_out) {
  const bool include_pad = std::get<graph::PoolAttrs>(node.attrs).count_include_pad;
  const PoolGeometry g = MakePoolGeometry(node, xs, ys);
  const int64_t in_size = g.w.in_size, out_size = g.w.out_size;
  ForEachPlane(g, threads, [&](int64_t pl) {
    T* xp = x + pl * in_size;
    if constexpr (kBackward) std::fill(xp, xp + in_size, T(0));
    ForEachWindow(g, [&](int64_t i, const auto& points, WindowInfo info) {
      const int64_t divisor = std::max<int64_t>(include_pad ? info.padded : info.inside, 1);
      const T scale = T(1) / static_cast<T>(divisor);
      if constexpr (kBackward) {
        const T grad = y_in[pl * out_size + i] * scale;
        points([&](int64_t off) { xp[off] += grad; });
      } else {
        T sum = 0;
        points([&](int64_t off) { sum += xp[off]; });
        y_out[pl * out_size + i] = sum * scale;
      }
    });
  });
}

template <typename T>
absl::Status AveragePoolForward(const ForwardArgs<T>& a) {
  AveragePoolImpl<T, false>(a.node, a.ctx.threads, a.inputs[0].shape, a.outputs[0].shape,
                            a.inputs[0].data, nullptr, a.outputs[0].data);
  return absl::OkStatus();
}

template <typename T>
absl::Status AveragePoolBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  if (a.grad_outputs[0].data == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
    return absl::OkStatus();
  }
  AveragePoolImpl<T, true>(a.node, a.ctx.threads, dx.shape, a.outputs[0].shape, dx.data,
                           a.grad_outputs[0].data, nullptr);
  return absl::OkStatus();
}

// ----- GlobalAveragePool ---------------------------------------------------------------------

// Y[n, c] = mean of X[n, c, ...]; dX = dY / spatial size.
template <typename T>
absl::Status GlobalAveragePoolForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t size = planes == 0 ? 0 : x.size() / planes;
  for (int64_t pl = 0; pl < planes; ++pl) {
    T sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += x.data[pl * size + i];
    a.outputs[0].data[pl] = size == 0 ? T(0) : sum / static_cast<T>(size);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GlobalAveragePoolBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = a.grad_outputs[0].data;
  const int64_t planes = dx.shape[0] * dx.shape[1];
  const int64_t size = planes == 0 ? 0 : dx.size() / planes;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T g = dy == nullptr ? T(0) : dy[pl] / static_cast<T>(size);
    std::fill(dx.data + pl * size, dx.data + (pl + 1) * size, g);
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterPoolKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kMaxPool) = Checked<T, &MaxPoolForward<T>, &MaxPoolBackward<T>>();
  Slot(table, graph::OpKind::kAveragePool) =
      Checked<T, &AveragePoolForward<T>, &AveragePoolBackward<T>>();
  Slot(table, graph::OpKind::kGlobalAveragePool) =
      Checked<T, &GlobalAveragePoolForward<T>, &GlobalAveragePoolBackward<T>>();
}

template void RegisterPoolKernels<float>(KernelTable<float>&);
template void RegisterPoolKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
