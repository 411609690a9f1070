// CPU kernels of the ConvPool family (see kernels.h for the conventions): Conv (N-d, strides,
// pads, dilations, groups), MaxPool, AveragePool, GlobalAveragePool.
//
// Conv is im2col + OpenBLAS Gemm, per group and chunk of samples (see kColumnBudget):
//   col[(c, k...), p] = X[n, g*Cg + c, p*stride - pad_begin + k*dilation]   (0 outside X)
//   Y[n, g*Coutg:(g+1)*Coutg, :] = W_g [Coutg, Cg*prod(k)] * col [Cg*prod(k), prod(out)]
// with the columns of a chunk's samples side by side, so one product covers the chunk. Its
// backward is dW_g += dY_g col^T and dcol = W_g^T dY_g scattered back (col2im) into dX.
#include <Eigen/Dense>
#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

template <typename T>
void Fill(const Tensor<T>& t, T value) {
  if (t.present()) std::fill(t.data, t.data + t.size(), value);
}

std::vector<int64_t> OrFill(const std::vector<int64_t>& v, size_t n, int64_t fill) {
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Scratch that is fully written before it is read: no zero-filling.
template <typename T>
std::unique_ptr<T[]> Scratch(int64_t n) {
  return std::unique_ptr<T[]>(new T[std::max<int64_t>(n, 1)]);
}

// fn(begin, end) over [0, n), split across up to `threads` threads (the caller's included) when
// the work (n * cost_per_item, roughly in values touched) pays for starting them.
template <typename F>
void ParallelFor(int64_t n, int threads, int64_t cost_per_item, const F& fn) {
  const int64_t parts = std::min<int64_t>(std::max(threads, 1), n);
  if (parts <= 1 || n * cost_per_item < (int64_t{1} << 16)) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t step = (n + parts - 1) / parts;
  std::vector<std::thread> workers;
  for (int64_t begin = step; begin < n; begin += step)
    workers.emplace_back([&fn, begin, end = std::min(n, begin + step)] { fn(begin, end); });
  fn(int64_t{0}, step);
  for (std::thread& t : workers) t.join();
}

// The geometry of a window op along its spatial axes (X is [N, C, in...], Y [N, C', out...]).
struct Window {
  std::vector<int64_t> in, out, kernel, stride, pad_begin, pad_end, dilation;
  int64_t in_size = 1, out_size = 1, kernel_size = 1;

  size_t rank() const { return in.size(); }
  void Finish() {
    in_size = Product(in);
    out_size = Product(out);
    kernel_size = Product(kernel);
  }
};

Window MakeWindow(const graph::Shape& x, const graph::Shape& y, std::vector<int64_t> kernel,
                  const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                  const std::vector<int64_t>& dilations) {
  const size_t s = x.size() - 2;
  Window w;
  w.in.assign(x.begin() + 2, x.end());
  w.out.assign(y.begin() + 2, y.end());
  w.kernel = std::move(kernel);
  w.stride = OrFill(strides, s, 1);
  const std::vector<int64_t> p = OrFill(pads, 2 * s, 0);
  w.pad_begin.assign(p.begin(), p.begin() + s);
  w.pad_end.assign(p.begin() + s, p.end());
  w.dilation = OrFill(dilations, s, 1);
  w.Finish();
  return w;
}

// Splits a row-major linear index over `extents` into `idx`.
void Unravel(int64_t linear, const std::vector<int64_t>& extents, std::vector<int64_t>& idx) {
  for (size_t d = extents.size(); d-- > 0;) {
    idx[d] = linear % extents[d];
    linear /= extents[d];
  }
}

// ----- im2col / col2im -----------------------------------------------------------------------

// kScatter false: col[(c,k), p] = x[c, window point] (0 in the padding) for `channels` planes, rows
// of col `ld` apart. kScatter true: the adjoint, x[c, window point] += col[(c,k), p].
template <typename T, bool kScatter>
void Columns(const Window& w, int64_t channels, T* x, T* col, int64_t ld) {
  const size_t s = w.rank();
  const int64_t out_last = w.out[s - 1], in_last = w.in[s - 1];
  const int64_t outer_count = w.out_size / out_last;
  const std::vector<int64_t> outer_extent(w.out.begin(), w.out.end() - 1);
  std::vector<int64_t> k(s), o(s);
  for (int64_t c = 0; c < channels; ++c) {
    T* xc = x + c * w.in_size;
    for (int64_t kidx = 0; kidx < w.kernel_size; ++kidx) {
      Unravel(kidx, w.kernel, k);
      T* row = col + (c * w.kernel_size + kidx) * ld;
      const int64_t shift = k[s - 1] * w.dilation[s - 1] - w.pad_begin[s - 1];
      for (int64_t outer = 0; outer < outer_count; ++outer) {
        Unravel(outer, outer_extent, o);
        T* r = row + outer * out_last;
        int64_t base = 0;
        bool valid = true;
        for (size_t d = 0; d + 1 < s && valid; ++d) {
          const int64_t i = o[d] * w.stride[d] - w.pad_begin[d] + k[d] * w.dilation[d];
          valid = i >= 0 && i < w.in[d];
          base = base * w.in[d] + i;
        }
        if (!valid) {
          if constexpr (!kScatter) std::fill(r, r + out_last, T(0));
          continue;
        }
        // Along the last axis, outputs [lo, hi) read X at ol * stride + shift; the rest is padding.
        const int64_t stride = w.stride[s - 1];
        const int64_t lo = std::min(shift >= 0 ? 0 : (-shift + stride - 1) / stride, out_last);
        const int64_t hi = std::clamp<int64_t>(
            in_last - shift <= 0 ? 0 : (in_last - 1 - shift) / stride + 1, lo, out_last);
        T* xr = xc + base * in_last + (lo * stride + shift);  // X read by output lo
        if constexpr (kScatter) {
          if (stride == 1) {
            using Values = Eigen::Array<T, Eigen::Dynamic, 1>;
            Eigen::Map<Values>(xr, hi - lo) += Eigen::Map<const Values>(r + lo, hi - lo);
          } else {
            for (int64_t ol = lo; ol < hi; ++ol) xr[(ol - lo) * stride] += r[ol];
          }
        } else {
          std::fill(r, r + lo, T(0));
          if (stride == 1) {
            std::copy(xr, xr + (hi - lo), r + lo);
          } else {
            for (int64_t ol = lo; ol < hi; ++ol) r[ol] = xr[(ol - lo) * stride];
          }
          std::fill(r + hi, r + out_last, T(0));
        }
      }
    }
  }
}

// ----- Conv ----------------------------------------------------------------------------------

// Several samples share one product (columns side by side: larger, faster products) as long as
// their columns stay under this many values.
constexpr int64_t kColumnBudget = int64_t{1} << 22;

struct ConvPlan {
  Window w;
  int64_t n, c, cout, groups, cg, coutg, k;  // k: rows of col, Cg * prod(kernel)
  int64_t chunk;                             // samples per product
};

template <typename T>
ConvPlan PlanConv(const graph::Node& node, const Tensor<T>& x, const Tensor<T>& wt,
                  const Tensor<T>& y) {
  const auto& a = std::get<graph::ConvAttrs>(node.attrs);
  std::vector<int64_t> kernel = a.kernel_shape.empty()
                                    ? std::vector<int64_t>(wt.shape.begin() + 2, wt.shape.end())
                                    : a.kernel_shape;
  ConvPlan p{.w = MakeWindow(x.shape, y.shape, std::move(kernel), a.strides, a.pads, a.dilations)};
  p.n = x.shape[0];
  p.c = x.shape[1];
  p.cout = wt.shape[0];
  p.groups = a.groups;
  p.cg = p.c / p.groups;
  p.coutg = p.cout / p.groups;
  p.k = p.cg * p.w.kernel_size;
  p.chunk = std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(p.k * p.w.out_size, 1), 1,
                                std::max<int64_t>(p.n, 1));
  return p;
}

// Copies group g of samples [n0, n0 + nc) between Y's layout [N, Cout, P] (`y`) and a product's
// [Coutg, nc * P] (`buf`).
template <typename T, bool kToY>
void GroupRows(const ConvPlan& p, int64_t n0, int64_t nc, int64_t g, T* y, T* buf) {
  const int64_t P = p.w.out_size;
  for (int64_t s = 0; s < nc; ++s)
    for (int64_t co = 0; co < p.coutg; ++co) {
      T* yr = y + ((n0 + s) * p.cout + g * p.coutg + co) * P;
      T* br = buf + co * nc * P + s * P;
      if constexpr (kToY) {
        std::copy(br, br + P, yr);
      } else {
        std::copy(yr, yr + P, br);
      }
    }
}

// The columns of group g of samples [n0, n0 + nc), side by side: [K, nc * P].
template <typename T>
void GroupColumns(const ConvPlan& p, int threads, int64_t n0, int64_t nc, int64_t g, T* x, T* col) {
  const int64_t P = p.w.out_size;
  ParallelFor(nc, threads, p.k * P, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s)
      Columns<T, false>(p.w, p.cg, x + ((n0 + s) * p.c + g * p.cg) * p.w.in_size, col + s * P,
                        nc * P);
  });
}

template <typename T>
absl::Status ConvForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& wt = a.inputs[1];
  const Tensor<T>& y = a.outputs[0];
  const ConvPlan p = PlanConv(a.node, x, wt, y);
  const int64_t P = p.w.out_size;
  const auto col = Scratch<T>(p.k * p.chunk * P);
  const auto prod = Scratch<T>(p.chunk > 1 ? p.coutg * p.chunk * P : 0);
  for (int64_t n0 = 0; n0 < p.n; n0 += p.chunk) {
    const int64_t nc = std::min(p.chunk, p.n - n0), cols = nc * P;
    for (int64_t g = 0; g < p.groups; ++g) {
      GroupColumns(p, a.ctx.threads, n0, nc, g, x.data, col.get());
      const T* wg = wt.data + g * p.coutg * p.k;
      if (nc == 1) {  // straight into Y
        Gemm<T>(false, false, p.coutg, P, p.k, T(1), wg, p.k, col.get(), P, T(0),
                y.data + (n0 * p.cout + g * p.coutg) * P, P);
      } else {
        Gemm<T>(false, false, p.coutg, cols, p.k, T(1), wg, p.k, col.get(), cols, T(0), prod.get(),
                cols);
        GroupRows<T, true>(p, n0, nc, g, y.data, prod.get());
      }
    }
  }
  if (a.inputs.size() > 2 && a.inputs[2].present()) {
    const T* b = a.inputs[2].data;
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t co = 0; co < p.cout; ++co) {
        T* yr = y.data + (n * p.cout + co) * P;
        for (int64_t i = 0; i < P; ++i) yr[i] += b[co];
      }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status ConvBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& wt = a.inputs[1];
  const ConvPlan p = PlanConv(a.node, x, wt, a.outputs[0]);
  const Tensor<T>& dx = a.grad_inputs[0];
  const Tensor<T>& dw = a.grad_inputs[1];
  const Tensor<T> db = a.grad_inputs.size() > 2 ? a.grad_inputs[2] : Tensor<T>{};
  Fill(dx, T(0));
  Fill(dw, T(0));
  Fill(db, T(0));
  T* dy = a.grad_outputs[0].data;
  if (dy == nullptr) return absl::OkStatus();
  const int64_t P = p.w.out_size;
  // col holds the columns (for dW), then dcol = W_g^T dY_g (for dX, scattered by col2im).
  const auto col = Scratch<T>(p.k * p.chunk * P);
  const auto dyb = Scratch<T>(p.chunk > 1 ? p.coutg * p.chunk * P : 0);
  for (int64_t n0 = 0; n0 < p.n; n0 += p.chunk) {
    const int64_t nc = std::min(p.chunk, p.n - n0), cols = nc * P;
    for (int64_t g = 0; g < p.groups; ++g) {
      const T* dyg = dy + (n0 * p.cout + g * p.coutg) * P;
      if (nc > 1) {
        GroupRows<T, false>(p, n0, nc, g, dy, dyb.get());
        dyg = dyb.get();
      }
      if (dw.present()) {  // dW_g += dY_g col^T
        GroupColumns(p, a.ctx.threads, n0, nc, g, x.data, col.get());
        Gemm<T>(false, true, p.coutg, p.k, cols, T(1), dyg, cols, col.get(), cols, T(1),
                dw.data + g * p.coutg * p.k, p.k);
      }
      if (dx.present()) {
        Gemm<T>(true, false, p.k, cols, p.coutg, T(1), wt.data + g * p.coutg * p.k, p.k, dyg, cols,
                T(0), col.get(), cols);
        ParallelFor(nc, a.ctx.threads, p.k * P, [&](int64_t begin, int64_t end) {
          for (int64_t s = begin; s < end; ++s)
            Columns<T, true>(p.w, p.cg, dx.data + ((n0 + s) * p.c + g * p.cg) * p.w.in_size,
                             col.get() + s * P, cols);
        });
      }
    }
  }
  if (db.present()) {
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t co = 0; co < p.cout; ++co) {
        const T* dyr = dy + (n * p.cout + co) * P;
        T sum = 0;
        for (int64_t i = 0; i < P; ++i) sum += dyr[i];
        db.data[co] += sum;
      }
  }
  return absl::OkStatus();
}

// ----- Pooling -------------------------------------------------------------------------------

Window PoolWindow(const graph::Node& node, const graph::Shape& x, const graph::Shape& y) {
  const auto& a = std::get<graph::PoolAttrs>(node.attrs);
  return MakeWindow(x, y, a.kernel_shape, a.strides, a.pads, {});
}

// The window of every output position, clipped to X: lo/hi (per output, per axis) and the
// divisor of AveragePool (points inside X, or with count_include_pad inside X plus pads; a
// ceil_mode overhang past the end padding never counts).
struct WindowBoxes {
  size_t rank;
  std::vector<int64_t> lo, hi;
  std::vector<int64_t> divisor;
  const int64_t* Lo(int64_t i) const { return lo.data() + i * rank; }
  const int64_t* Hi(int64_t i) const { return hi.data() + i * rank; }
};

WindowBoxes MakeBoxes(const Window& w, bool count_include_pad) {
  const size_t s = w.rank();
  WindowBoxes b{.rank = s,
                .lo = std::vector<int64_t>(w.out_size * s),
                .hi = std::vector<int64_t>(w.out_size * s),
                .divisor = std::vector<int64_t>(w.out_size)};
  std::vector<int64_t> o(s);
  for (int64_t i = 0; i < w.out_size; ++i) {
    Unravel(i, w.out, o);
    int64_t padded = 1, inside = 1;
    for (size_t d = 0; d < s; ++d) {
      const int64_t start = o[d] * w.stride[d] - w.pad_begin[d];
      const int64_t end = start + w.kernel[d];
      const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(end, w.in[d]);
      padded *= std::min(end, w.in[d] + w.pad_end[d]) - start;
      inside *= std::max<int64_t>(hi - lo, 0);
      b.lo[i * s + d] = lo;
      b.hi[i * s + d] = hi;
    }
    b.divisor[i] = std::max<int64_t>(count_include_pad ? padded : inside, 1);
  }
  return b;
}

// Calls f(offset) for every point of the box [lo, hi) of a row-major array with extents `in`;
// `idx` is scratch of the same rank. Rank 2 (images) takes a plain double loop.
template <typename F>
void ForEachInBox(const int64_t* lo, const int64_t* hi, const std::vector<int64_t>& in,
                  std::vector<int64_t>& idx, F&& f) {
  const size_t s = in.size();
  if (s == 2) {
    for (int64_t r = lo[0]; r < hi[0]; ++r)
      for (int64_t c = lo[1]; c < hi[1]; ++c) f(r * in[1] + c);
    return;
  }
  for (size_t d = 0; d < s; ++d) {
    if (hi[d] <= lo[d]) return;
    idx[d] = lo[d];
  }
  for (;;) {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < s; ++d) base = base * in[d] + idx[d];
    base *= in[s - 1];
    for (int64_t i = lo[s - 1]; i < hi[s - 1]; ++i) f(base + i);
    size_t d = s - 1;  // the last axis was the inner loop; advance the others
    for (;;) {
      if (d == 0) return;
      --d;
      if (++idx[d] < hi[d]) break;
      idx[d] = lo[d];
    }
  }
}

// MaxPool: Y = max over the window's points inside X (padding never wins); the arg-max's offset
// in its (n, c) plane is kept in state.ints[0] for backward (-1: empty window, Y = 0).
template <typename T>
absl::Status MaxPoolForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  const Window w = PoolWindow(a.node, x.shape, y.shape);
  const WindowBoxes boxes = MakeBoxes(w, false);
  const int64_t planes = x.shape[0] * x.shape[1];
  std::vector<int64_t>& arg = a.state.ints.emplace_back(planes * w.out_size);
  ParallelFor(planes, a.ctx.threads, w.in_size, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(w.rank());
    for (int64_t pl = begin; pl < end; ++pl) {
      const T* xp = x.data + pl * w.in_size;
      for (int64_t i = 0; i < w.out_size; ++i) {
        int64_t best = -1;
        T best_value = T(0);
        ForEachInBox(boxes.Lo(i), boxes.Hi(i), w.in, idx, [&](int64_t off) {
          if (best < 0 || xp[off] > best_value) {
            best = off;
            best_value = xp[off];
          }
        });
        arg[pl * w.out_size + i] = best;
        y.data[pl * w.out_size + i] = best_value;
      }
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status MaxPoolBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  Fill(dx, T(0));
  const T* dy = a.grad_outputs[0].data;
  if (dy == nullptr) return absl::OkStatus();
  const Window w = PoolWindow(a.node, a.inputs[0].shape, a.outputs[0].shape);
  const int64_t planes = dx.shape[0] * dx.shape[1];
  const std::vector<int64_t>& arg = a.state.ints.at(0);
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t i = 0; i < w.out_size; ++i) {
      const int64_t off = arg[pl * w.out_size + i];
      if (off >= 0) dx.data[pl * w.in_size + off] += dy[pl * w.out_size + i];
    }
  return absl::OkStatus();
}

// AveragePool: the window's sum over X divided by its WindowBoxes divisor; backward spreads
// dY / divisor over the same points.
template <typename T, bool kBackward>
void AveragePoolImpl(const graph::Node& node, int threads, const graph::Shape& xs,
                     const graph::Shape& ys, T* x, T* y) {
  const auto& attrs = std::get<graph::PoolAttrs>(node.attrs);
  const Window w = PoolWindow(node, xs, ys);
  const WindowBoxes boxes = MakeBoxes(w, attrs.count_include_pad);
  const int64_t planes = xs[0] * xs[1];
  ParallelFor(planes, threads, w.in_size, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(w.rank());
    for (int64_t pl = begin; pl < end; ++pl) {
      T* xp = x + pl * w.in_size;
      for (int64_t i = 0; i < w.out_size; ++i) {
        const T scale = T(1) / static_cast<T>(boxes.divisor[i]);
        T& yv = y[pl * w.out_size + i];
        if constexpr (kBackward) {
          const T g = yv * scale;
          ForEachInBox(boxes.Lo(i), boxes.Hi(i), w.in, idx, [&](int64_t off) { xp[off] += g; });
        } else {
          T sum = 0;
          ForEachInBox(boxes.Lo(i), boxes.Hi(i), w.in, idx, [&](int64_t off) { sum += xp[off]; });
          yv = sum * scale;
        }
      }
    }
  });
}

template <typename T>
absl::Status AveragePoolForward(const ForwardArgs<T>& a) {
  AveragePoolImpl<T, false>(a.node, a.ctx.threads, a.inputs[0].shape, a.outputs[0].shape,
                            a.inputs[0].data, a.outputs[0].data);
  return absl::OkStatus();
}

template <typename T>
absl::Status AveragePoolBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  Fill(dx, T(0));
  if (a.grad_outputs[0].data == nullptr) return absl::OkStatus();
  AveragePoolImpl<T, true>(a.node, a.ctx.threads, dx.shape, a.outputs[0].shape, dx.data,
                           a.grad_outputs[0].data);
  return absl::OkStatus();
}

// GlobalAveragePool: Y[n, c] = mean of X[n, c, ...]; dX = dY / spatial size.
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
void RegisterConvPoolKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kConv) = {&ConvForward<T>, &ConvBackward<T>};
  Slot(table, graph::OpKind::kMaxPool) = {&MaxPoolForward<T>, &MaxPoolBackward<T>};
  Slot(table, graph::OpKind::kAveragePool) = {&AveragePoolForward<T>, &AveragePoolBackward<T>};
  Slot(table, graph::OpKind::kGlobalAveragePool) = {&GlobalAveragePoolForward<T>,
                                                    &GlobalAveragePoolBackward<T>};
}

template void RegisterConvPoolKernels<float>(KernelTable<float>&);
template void RegisterConvPoolKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
