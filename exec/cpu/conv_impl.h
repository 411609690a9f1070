// Internal to the CPU kernels of the ConvPool family (conv.cc, pool.cc): the geometry of a
// window op along its spatial axes, shared by Conv and the pools.
//
//   const Window w = MakeWindow(x.shape, y.shape, kernel, attrs.strides, attrs.pads, {});
//   const AxisRanges r = ClippedRanges(w, /*axis=*/0);   // window rows of every output row
//   for (int64_t o = 0; o < w.out[0]; ++o) Visit(r.lo[o], r.hi[o]);
//
// RegisterConvPoolKernels (conv.cc) registers Conv and calls RegisterPoolKernels (pool.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

inline int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The geometry of a window op along its spatial axes (X is [N, C, in...], Y [N, C', out...]).
struct Window {
  std::vector<int64_t> in, out, kernel, stride, pad_begin, pad_end, dilation;
  int64_t in_size = 1, out_size = 1, kernel_size = 1;

  size_t rank() const { return in.size(); }
};

// Missing strides/dilations are 1, missing pads 0.
inline Window MakeWindow(const graph::Shape& x, const graph::Shape& y, std::vector<int64_t> kernel,
                         const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                         const std::vector<int64_t>& dilations) {
  const size_t s = x.size() - 2;
  const auto or_fill = [](const std::vector<int64_t>& v, size_t n, int64_t fill) {
    return v.empty() ? std::vector<int64_t>(n, fill) : v;
  };
  Window w;
  w.in.assign(x.begin() + 2, x.end());
  w.out.assign(y.begin() + 2, y.end());
  w.kernel = std::move(kernel);
  w.stride = or_fill(strides, s, 1);
  const std::vector<int64_t> p = or_fill(pads, 2 * s, 0);
  w.pad_begin.assign(p.begin(), p.begin() + s);
  w.pad_end.assign(p.begin() + s, p.end());
  w.dilation = or_fill(dilations, s, 1);
  w.in_size = Product(w.in);
  w.out_size = Product(w.out);
  w.kernel_size = Product(w.kernel);
  return w;
}

// Splits a row-major linear index over `extents` into `idx`.
inline void Unravel(int64_t linear, const std::vector<int64_t>& extents,
                    std::vector<int64_t>& idx) {
  for (size_t d = extents.size(); d-- > 0;) {
    idx[d] = linear % extents[d];
    linear /= extents[d];
  }
}

// A pooling window (dilation 1) along one axis, per output index o: the points [lo[o], hi[o])
// inside X, and `padded[o]`, the count inside X plus the pads (a ceil_mode overhang past the
// end padding never counts). A window is the product of its axes' ranges.
struct AxisRanges {
  std::vector<int64_t> lo, hi, padded;
};

inline AxisRanges ClippedRanges(const Window& w, size_t d) {
  AxisRanges r{.lo = std::vector<int64_t>(w.out[d]),
               .hi = std::vector<int64_t>(w.out[d]),
               .padded = std::vector<int64_t>(w.out[d])};
  for (int64_t o = 0; o < w.out[d]; ++o) {
    const int64_t start = o * w.stride[d] - w.pad_begin[d];
    const int64_t end = start + w.kernel[d];
    r.lo[o] = std::clamp<int64_t>(start, 0, w.in[d]);
    r.hi[o] = std::clamp<int64_t>(end, r.lo[o], w.in[d]);
    r.padded[o] = std::min(end, w.in[d] + w.pad_end[d]) - start;
  }
  return r;
}

// The pooling half of the family (pool.cc): MaxPool, AveragePool, GlobalAveragePool.
template <typename T>
void RegisterPoolKernels(KernelTable<T>& table);

}  // namespace tessera::exec::cpu
