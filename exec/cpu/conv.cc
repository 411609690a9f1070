// CPU kernel of Conv (N-d, strides, pads, dilations, groups; see kernels.h for the conventions),
// and the ConvPool family's registration.
//
// Conv is im2col + a matrix product per group (K = Cg * prod(kernel), P = prod(out)):
//   col[(c, k...), p] = X[n, g*Cg + c, p*stride - pad_begin + k*dilation]   (0 outside X)
//   Y[n, g*Coutg:(g+1)*Coutg, :] = W_g [Coutg, K] * col [K, P]
// One sample's product [Coutg, P] is already a slice of Y's layout, so when P is large enough
// for an efficient product (kMinProductColumns) each sample has its own product, written
// straight into Y, with the bias added while those rows are in cache. Smaller feature maps put
// the columns of a *chunk* of samples side by side ([K, chunk * P]) and copy the product into Y
// (bias fused into the copy). A 1x1 conv with stride 1 and no pads uses X as its columns.
//
// Threads: the samples are split into one contiguous range per thread; each thread builds its
// chunks' columns in its own buffer (kept across calls, so it stays in cache for the product)
// and multiplies them on its own with Eigen's single-threaded product, with no synchronisation
// until its range is done. With fewer chunks than threads (batch 1), or a small conv, the chunks
// run one by one and each step is parallel inside: im2col/col2im split by rows, products on
// OpenBLAS's threads.
//
// Backward, per chunk and group: dW_g += dY_g col^T (each thread into its own partial sum, added
// at the end), then dcol = W_g^T dY_g is scattered back into dX (col2im: each (sample, channel)
// plane zeroed and accumulated by one thread). dB is the row sums of dY. Nothing is kept between
// forward and backward: backward rebuilds the columns from X.
#include <Eigen/Dense>
#include <algorithm>
#include <memory>
#include <vector>

#include "tessera/exec/cpu/conv_impl.h"
#include "tessera/exec/cpu/elementwise_impl.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kept_array_impl.h"

namespace tessera::exec::cpu {
namespace {

// Products of fewer columns than this put several samples side by side.
constexpr int64_t kMinProductColumns = 256;
// A chunk's columns stay under this many values (4 MB of float), unless one sample is larger.
constexpr int64_t kChunkValues = int64_t{1} << 20;
// Per-thread scratch up to this many values is kept across calls; larger is allocated per call.
constexpr int64_t kKeptScratchValues = int64_t{1} << 22;
// Convs of fewer multiply-adds than this stay on the calling thread.
constexpr int64_t kMinParallelMacs = int64_t{1} << 20;

template <typename T>
using Values = Eigen::Array<T, Eigen::Dynamic, 1>;

// Scratch of n values: the calling thread's buffer `slot` (0 or 1) when small enough to keep,
// else allocated for this call. Contents are whatever the last user left.
template <typename T>
class Scratch {
 public:
  Scratch(int slot, int64_t n) {
    thread_local std::vector<T> kept[2];
    if (n <= kKeptScratchValues) {
      data_ = GrowScratch(kept[slot], n);
    } else {
      owned_.reset(new T[n]);
      data_ = owned_.get();
    }
  }
  T* get() const { return data_; }

 private:
  std::unique_ptr<T[]> owned_;
  T* data_ = nullptr;
};

// How a range of samples runs: `threads` for the loops inside one chunk (im2col, col2im,
// copies), and whether products use OpenBLAS (its own threads) or Eigen on the calling thread.
struct Exec {
  int threads = 1;
  bool blas = true;
};

// C [m, n] (= or +=) op(A) op(B), op(A) [m, k], op(B) [k, n], all row-major with leading
// dimensions lda, ldb, ldc.
template <typename T>
void Product(const Exec& e, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
             int64_t lda, const T* b, int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  if (e.blas) {
    Gemm<T>(trans_a, trans_b, m, n, k, T(1), a, lda, b, ldb, accumulate ? T(1) : T(0), c, ldc);
    return;
  }
  if (m == 0 || n == 0) return;
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
  const ConstMap am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  Eigen::Map<Matrix, 0, Eigen::OuterStride<>> cm(c, m, n, Eigen::OuterStride<>(ldc));
  const auto run = [&](const auto& opa, const auto& opb) {
    if (accumulate) {
      cm.noalias() += opa * opb;
    } else {
      cm.noalias() = opa * opb;
    }
  };
  if (trans_a && trans_b) {
    run(am.transpose(), bm.transpose());
  } else if (trans_a) {
    run(am.transpose(), bm);
  } else if (trans_b) {
    run(am, bm.transpose());
  } else {
    run(am, bm);
  }
}

struct ConvPlan {
  Window w;
  int64_t n, c, cout, groups, cg, coutg, k, p;  // k: rows of col, Cg * prod(kernel); p: prod(out)
  int64_t chunk;      // samples per product (1: the product is written into Y)
  bool x_is_columns;  // 1x1 kernel, stride 1, no pads

  // X serves as the columns: no im2col, no col2im.
  bool direct() const { return x_is_columns && chunk == 1; }
  int64_t ColumnValues() const { return direct() ? 0 : k * chunk * p; }
};

template <typename T>
ConvPlan PlanConv(const graph::Node& node, const Tensor<T>& x, const Tensor<T>& wt,
                  const Tensor<T>& y) {
  const auto& a = std::get<graph::ConvAttrs>(node.attrs);
  ConvPlan p{.w = MakeWindow(x.shape, y.shape, graph::ConvKernelShape(a, wt.shape), a.strides,
                             a.pads, a.dilations)};
  p.n = x.shape[0];
  p.c = x.shape[1];
  p.cout = wt.shape[0];
  p.groups = a.groups;
  p.cg = p.c / p.groups;
  p.coutg = p.cout / p.groups;
  p.k = p.cg * p.w.kernel_size;
  p.p = p.w.out_size;
  const int64_t per_sample = std::max<int64_t>(p.k * p.p, 1);
  p.chunk = std::min((kMinProductColumns + p.p - 1) / std::max<int64_t>(p.p, 1),
                     kChunkValues / per_sample);
  p.chunk = std::clamp<int64_t>(p.chunk, 1, std::max<int64_t>(p.n, 1));
  p.x_is_columns = p.w.kernel_size == 1 && p.w.in == p.w.out;
  for (size_t d = 0; d < p.w.rank(); ++d)
    p.x_is_columns = p.x_is_columns && p.w.stride[d] == 1 && p.w.pad_begin[d] == 0;
  return p;
}

// Calls fn(part, n0, n1, exec) for ranges of whole chunks covering the samples: one range per
// thread, in parallel, each on its own (Exec{1, Eigen}); or, for small convs and fewer chunks than
// threads, one range whose loops use the threads (Exec{threads, OpenBLAS}). Returns the number
// of parts.
template <typename F>
int64_t ForEachSampleRange(const ConvPlan& p, int threads, const F& fn) {
  const int64_t chunks = (p.n + p.chunk - 1) / p.chunk;
  const int64_t parts = std::min<int64_t>(std::max(threads, 1), chunks);
  if (parts <= 1 || p.n * p.cout * p.k * p.p < kMinParallelMacs) {
    fn(int64_t{0}, int64_t{0}, p.n, Exec{.threads = threads, .blas = true});
    return 1;
  }
  ParallelFor(static_cast<int>(parts), parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t n0 = std::min(p.n, chunks * part / parts * p.chunk);
      const int64_t n1 = std::min(p.n, chunks * (part + 1) / parts * p.chunk);
      fn(part, n0, n1, Exec{.threads = 1, .blas = false});
    }
  });
  return parts;
}

// ----- im2col / col2im -----------------------------------------------------------------------

// Rows [row_begin, row_end) of one sample's columns, row = (c, kernel index): kScatter false:
// col[row, p] = x[c, window point] (0 in the padding); kScatter true: the adjoint,
// x[c, window point] += col[row, p]. `x` is the sample's first channel of the group, rows of
// `col` are `ld` apart.
template <typename T, bool kScatter>
void ColumnRows(const Window& w, T* x, T* col, int64_t ld, int64_t row_begin, int64_t row_end) {
  const size_t s = w.rank();
  const int64_t out_last = w.out[s - 1], in_last = w.in[s - 1], stride = w.stride[s - 1];
  const int64_t outer_count = w.out_size / std::max<int64_t>(out_last, 1);
  const std::vector<int64_t> outer_extent(w.out.begin(), w.out.end() - 1);
  std::vector<int64_t> k(s), o(s);
  for (int64_t row = row_begin; row < row_end; ++row) {
    T* xc = x + (row / w.kernel_size) * w.in_size;
    Unravel(row % w.kernel_size, w.kernel, k);
    T* r0 = col + row * ld;
    const int64_t shift = k[s - 1] * w.dilation[s - 1] - w.pad_begin[s - 1];
    // Along the last axis, outputs [lo, hi) read X at ol * stride + shift; the rest is padding.
    const int64_t lo = std::min(shift >= 0 ? 0 : (-shift + stride - 1) / stride, out_last);
    const int64_t hi = std::clamp<int64_t>(
        in_last - shift <= 0 ? 0 : (in_last - 1 - shift) / stride + 1, lo, out_last);
    for (int64_t outer = 0; outer < outer_count; ++outer) {
      Unravel(outer, outer_extent, o);
      T* r = r0 + outer * out_last;
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
      T* xr = xc + base * in_last + (lo * stride + shift);  // X read by output lo
      if constexpr (kScatter) {
        if (stride == 1) {
          Eigen::Map<Values<T>>(xr, hi - lo) += Eigen::Map<const Values<T>>(r + lo, hi - lo);
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

// The columns of group g of the chunk's samples [n0, n0 + nc) into `col` ([K, nc * P], sample s
// at column s * P), split across e.threads by (sample, row).
template <typename T>
void BuildColumns(const ConvPlan& p, const Exec& e, int64_t n0, int64_t nc, int64_t g, T* x,
                  T* col) {
  const int64_t per_part = std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(p.p, 1));
  ParallelFor(e.threads, nc * p.k, per_part, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end;) {
      const int64_t s = u / p.k, row = u % p.k, rows = std::min(p.k - row, end - u);
      ColumnRows<T, false>(p.w, x + ((n0 + s) * p.c + g * p.cg) * p.w.in_size, col + s * p.p,
                           nc * p.p, row, row + rows);
      u += rows;
    }
  });
}

// dX planes of group g of the chunk's samples = col2im of `col`, split across e.threads by
// (sample, channel): each plane is zeroed, then accumulated by one thread.
template <typename T>
void ScatterColumns(const ConvPlan& p, const Exec& e, int64_t n0, int64_t nc, int64_t g, T* col,
                    T* dx) {
  const int64_t plane_cost = std::max<int64_t>(p.w.kernel_size * p.p, 1);
  ParallelFor(e.threads, nc * p.cg, std::max<int64_t>(1, kMinParallelElements / plane_cost),
              [&](int64_t begin, int64_t end) {
                for (int64_t u = begin; u < end; ++u) {
                  const int64_t s = u / p.cg, c = u % p.cg;
                  T* xs = dx + ((n0 + s) * p.c + g * p.cg) * p.w.in_size;
                  std::fill(xs + c * p.w.in_size, xs + (c + 1) * p.w.in_size, T(0));
                  ColumnRows<T, true>(p.w, xs, col + s * p.p, nc * p.p, c * p.w.kernel_size,
                                      (c + 1) * p.w.kernel_size);
                }
              });
}

// Copies group g of the chunk's samples [n0, n0 + nc) between Y's layout [N, Cout, P] (`y`) and
// a product's [Coutg, nc * P] (`buf`), adding `bias` (Coutg values, or nullptr) on the way to Y.
template <typename T, bool kToY>
void CopyRows(const ConvPlan& p, const Exec& e, int64_t n0, int64_t nc, int64_t g, const T* bias,
              T* y, T* buf) {
  const int64_t P = p.p;
  const int64_t per_part = std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(P, 1));
  ParallelFor(e.threads, nc * p.coutg, per_part, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t s = u / p.coutg, co = u % p.coutg;
      Eigen::Map<Values<T>> yr(y + ((n0 + s) * p.cout + g * p.coutg + co) * P, P);
      Eigen::Map<Values<T>> br(buf + co * nc * P + s * P, P);
      if constexpr (!kToY) {
        br = yr;
      } else if (bias != nullptr) {
        yr = br + bias[co];
      } else {
        yr = br;
      }
    }
  });
}

// ----- Conv forward and backward -------------------------------------------------------------

// Y of the chunk's samples [n0, n0 + nc), every group.
template <typename T>
void ForwardChunk(const ConvPlan& p, const Exec& e, int64_t n0, int64_t nc, T* x, const T* wt,
                  const T* bias, T* y) {
  const Scratch<T> col(0, p.ColumnValues());
  const Scratch<T> prod(1, nc > 1 ? p.coutg * nc * p.p : 0);
  const int64_t cols = nc * p.p;
  for (int64_t g = 0; g < p.groups; ++g) {
    const T* wg = wt + g * p.coutg * p.k;
    const T* bg = bias == nullptr ? nullptr : bias + g * p.coutg;
    const T* b = x + (n0 * p.c + g * p.cg) * p.p;  // X's group slice (direct only)
    if (!p.direct()) {
      BuildColumns(p, e, n0, nc, g, x, col.get());
      b = col.get();
    }
    if (nc > 1) {
      Product(e, false, false, p.coutg, cols, p.k, wg, p.k, b, cols, false, prod.get(), cols);
      CopyRows<T, true>(p, e, n0, nc, g, bg, y, prod.get());
      continue;
    }
    T* yg = y + (n0 * p.cout + g * p.coutg) * p.p;
    Product(e, false, false, p.coutg, p.p, p.k, wg, p.k, b, p.p, false, yg, p.p);
    if (bg != nullptr) {  // the rows of Y are [Coutg, P]: add bias[co] to row co
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> rows(yg, p.coutg,
                                                                                        p.p);
      rows.colwise() += Eigen::Map<const Values<T>>(bg, p.coutg);
    }
  }
}

template <typename T>
absl::Status ConvForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& wt = a.inputs[1];
  const T* bias = a.inputs.size() > 2 ? a.inputs[2].data : nullptr;
  const ConvPlan p = PlanConv(a.node, x, wt, a.outputs[0]);
  ForEachSampleRange(p, a.ctx.threads, [&](int64_t, int64_t n0, int64_t n1, const Exec& e) {
    for (int64_t s = n0; s < n1; s += p.chunk)
      ForwardChunk(p, e, s, std::min(p.chunk, n1 - s), x.data, wt.data, bias, a.outputs[0].data);
  });
  return absl::OkStatus();
}

// dW (accumulated into `dw`, when not nullptr) and dX (when present) of the chunk's samples
// [n0, n0 + nc), every group.
template <typename T>
void BackwardChunk(const ConvPlan& p, const Exec& e, int64_t n0, int64_t nc, T* x, const T* wt,
                   T* dy, T* dx, T* dw) {
  const Scratch<T> col(0, p.ColumnValues());
  const Scratch<T> dyb(1, nc > 1 ? p.coutg * nc * p.p : 0);
  const int64_t cols = nc * p.p;
  for (int64_t g = 0; g < p.groups; ++g) {
    const T* dyg = dy + (n0 * p.cout + g * p.coutg) * p.p;
    if (nc > 1) {
      CopyRows<T, false>(p, e, n0, nc, g, nullptr, dy, dyb.get());
      dyg = dyb.get();
    }
    T* xg = x + (n0 * p.c + g * p.cg) * p.p;  // X's group slice (direct only)
    if (dw != nullptr) {                      // dW_g += dY_g col^T
      if (!p.direct()) BuildColumns(p, e, n0, nc, g, x, col.get());
      Product(e, false, true, p.coutg, p.k, cols, dyg, cols, p.direct() ? xg : col.get(), cols,
              true, dw + g * p.coutg * p.k, p.k);
    }
    if (dx == nullptr) continue;
    const T* wg = wt + g * p.coutg * p.k;
    if (p.direct()) {  // dX's group slice = W_g^T dY_g
      Product(e, true, false, p.k, cols, p.coutg, wg, p.k, dyg, cols, false,
              dx + (n0 * p.c + g * p.cg) * p.p, cols);
      continue;
    }
    Product(e, true, false, p.k, cols, p.coutg, wg, p.k, dyg, cols, false, col.get(), cols);
    ScatterColumns(p, e, n0, nc, g, col.get(), dx);
  }
}

// The sum of n values, in 16 lanes (vectorised without reassociating a single chain).
template <typename T>
T Sum(const T* v, int64_t n) {
  constexpr int kLanes = 16;
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += v[i + l];
  T sum = 0;
  for (; i < n; ++i) sum += v[i];
  for (T l : lanes) sum += l;
  return sum;
}

// dB[co] = sum over samples and positions of dY[n, co, :], split across threads by channel.
template <typename T>
void BiasGradient(const ConvPlan& p, int threads, const T* dy, T* db) {
  const int64_t per_part =
      std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(p.n * p.p, 1));
  ParallelFor(threads, p.cout, per_part, [&](int64_t begin, int64_t end) {
    for (int64_t co = begin; co < end; ++co) {
      T sum = 0;
      for (int64_t n = 0; n < p.n; ++n) sum += Sum(dy + (n * p.cout + co) * p.p, p.p);
      db[co] = sum;
    }
  });
}

template <typename T>
absl::Status ConvBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& wt = a.inputs[1];
  const ConvPlan p = PlanConv(a.node, x, wt, a.outputs[0]);
  const Tensor<T>& dx = a.grad_inputs[0];
  const Tensor<T>& dw = a.grad_inputs[1];
  const Tensor<T> db = a.grad_inputs.size() > 2 ? a.grad_inputs[2] : Tensor<T>{};
  T* dy = a.grad_outputs[0].data;
  for (const Tensor<T>* t : {&dw, &db, dy == nullptr ? &dx : nullptr})
    if (t != nullptr && t->present()) std::fill(t->data, t->data + t->size(), T(0));
  if (dy == nullptr) return absl::OkStatus();
  if (db.present()) BiasGradient(p, a.ctx.threads, dy, db.data);
  if (!dx.present() && !dw.present()) return absl::OkStatus();
  // Every part but the first sums its dW into a partial of its own, added to dW at the end.
  const int64_t dw_size = dw.present() ? dw.size() : 0;
  std::vector<T> partials;
  if (dw.present()) partials.assign(dw_size * (std::max(a.ctx.threads, 1) - 1), T(0));
  const int64_t parts = ForEachSampleRange(
      p, a.ctx.threads, [&](int64_t part, int64_t n0, int64_t n1, const Exec& e) {
        T* dw_part = !dw.present() ? nullptr
                     : part == 0   ? dw.data
                                   : &partials[(part - 1) * dw_size];
        for (int64_t s = n0; s < n1; s += p.chunk)
          BackwardChunk(p, e, s, std::min(p.chunk, n1 - s), x.data, wt.data, dy, dx.data, dw_part);
      });
  if (dw.present()) {
    Eigen::Map<Values<T>> sum(dw.data, dw_size);
    for (int64_t part = 1; part < parts; ++part)
      sum += Eigen::Map<const Values<T>>(&partials[(part - 1) * dw_size], dw_size);
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterConvPoolKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kConv) = Checked<T, &ConvForward<T>, &ConvBackward<T>>();
  RegisterPoolKernels<T>(table);
}

template void RegisterConvPoolKernels<float>(KernelTable<float>&);
template void RegisterConvPoolKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
