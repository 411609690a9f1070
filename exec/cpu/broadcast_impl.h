// Internal to the CPU kernels: walking K tensors over one index space with per-tensor strides
// (numpy broadcasting, transposes, slices), as runs of an innermost loop.
//
//   // Y = A + B with broadcasting: operand 0 is Y (dense), 1 and 2 read A and B.
//   StridedLoop<3> loop = MakeStridedLoop<3>(y_shape, {DenseStrides(y_shape),
//       BroadcastStrides(a_shape, y_shape), BroadcastStrides(b_shape, y_shape)});
//   ForEachRun(loop, [&](const std::array<int64_t, 3>& at) {
//     for (int64_t j = 0; j < loop.inner; ++j)
//       y[at[0] + j] = a[at[1] + j * loop.inner_strides[1]] + b[at[2] + j * loop.inner_strides[2]];
//   });
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tessera/exec/cpu/elementwise_impl.h"
#include "tessera/graph/shape.h"

namespace tessera::exec::cpu {

// Row-major strides (in elements) of a dense tensor of this shape.
inline std::vector<int64_t> DenseStrides(const graph::Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

// Strides of a dense tensor of shape `in` read as shape `out` under numpy broadcasting: dims
// are right-aligned, and a dim of size 1 (or missing) repeats with stride 0. `in` must
// broadcast to `out` (shape inference has checked it).
inline std::vector<int64_t> BroadcastStrides(const graph::Shape& in, const graph::Shape& out) {
  const std::vector<int64_t> dense = DenseStrides(in);
  std::vector<int64_t> strides(out.size(), 0);
  const int64_t shift = static_cast<int64_t>(out.size()) - static_cast<int64_t>(in.size());
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    strides[d + shift] = (in[d] == 1 && out[d + shift] != 1) ? 0 : dense[d];
  }
  return strides;
}

// An index space with K operands: `outer` dims, each with a stride per operand, and an
// innermost run of `inner` elements with stride inner_strides[k]. Dims of size 1 are dropped
// and neighbouring dims that every operand walks contiguously are merged, so a plain
// element-wise op on dense tensors is one run of numel elements.
template <size_t K>
struct StridedLoop {
  graph::Shape outer;
  std::array<std::vector<int64_t>, K> outer_strides;
  int64_t inner = 1;
  std::array<int64_t, K> inner_strides{};
  int64_t runs() const {
    int64_t n = 1;
    for (int64_t d : outer) n *= d;
    return inner == 0 ? 0 : n;
  }
};

template <size_t K>
StridedLoop<K> MakeStridedLoop(const graph::Shape& shape,
                               const std::array<std::vector<int64_t>, K>& strides) {
  // Step 1: drop size-1 dims; a size-0 dim empties the whole space.
  graph::Shape dims;
  std::array<std::vector<int64_t>, K> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      StridedLoop<K> empty;
      empty.inner = 0;
      return empty;
    }
    if (shape[d] == 1) continue;
    dims.push_back(shape[d]);
    for (size_t k = 0; k < K; ++k) st[k].push_back(strides[k][d]);
  }
  // Step 2: merge dim d into d+1 when every operand steps over d exactly as a run of d+1.
  graph::Shape merged;
  std::array<std::vector<int64_t>, K> mst;
  for (size_t d = 0; d < dims.size(); ++d) {
    bool merge = !merged.empty();
    for (size_t k = 0; k < K && merge; ++k) {
      merge = mst[k].back() == st[k][d] * dims[d];
    }
    if (merge) {
      merged.back() *= dims[d];
      for (size_t k = 0; k < K; ++k) mst[k].back() = st[k][d];
    } else {
      merged.push_back(dims[d]);
      for (size_t k = 0; k < K; ++k) mst[k].push_back(st[k][d]);
    }
  }
  // Step 3: the last dim is the innermost run.
  StridedLoop<K> loop;
  if (!merged.empty()) {
    loop.inner = merged.back();
    merged.pop_back();
    for (size_t k = 0; k < K; ++k) {
      loop.inner_strides[k] = mst[k].back();
      mst[k].pop_back();
    }
  }
  loop.outer = std::move(merged);
  loop.outer_strides = std::move(mst);
  return loop;
}

// Calls run(offsets) for runs [first, last) of the loop, in order; offsets[k] is operand k's
// element offset at the start of the run.
template <size_t K, typename Run>
void ForRunRange(const StridedLoop<K>& loop, int64_t first, int64_t last, Run&& run) {
  const size_t rank = loop.outer.size();
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, K> at{};
  // Step 1: position the odometer at run `first`.
  int64_t rest = first;
  for (size_t d = rank; d-- > 0;) {
    counter[d] = rest % loop.outer[d];
    rest /= loop.outer[d];
    for (size_t k = 0; k < K; ++k) at[k] += counter[d] * loop.outer_strides[k][d];
  }
  // Step 2: one run, then advance the innermost outer dim, carrying into the ones above.
  for (int64_t r = first; r < last; ++r) {
    run(at);
    for (size_t d = rank; d-- > 0;) {
      for (size_t k = 0; k < K; ++k) at[k] += loop.outer_strides[k][d];
      if (++counter[d] < loop.outer[d]) break;
      for (size_t k = 0; k < K; ++k) at[k] -= loop.outer_strides[k][d] * loop.outer[d];
      counter[d] = 0;
    }
  }
}

template <size_t K, typename Run>
void ForEachRun(const StridedLoop<K>& loop, Run&& run) {
  ForRunRange(loop, 0, loop.runs(), run);
}

// As ForEachRun, split over threads; only for runs that write disjoint memory (an operand
// written with a stride-0 dim must use ForEachRun).
template <size_t K, typename Run>
void ParallelForEachRun(const StridedLoop<K>& loop, int threads, Run&& run) {
  const int64_t runs = loop.runs();
  const int64_t min_runs =
      std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(loop.inner, 1));
  ParallelFor(threads, runs, min_runs,
              [&](int64_t first, int64_t last) { ForRunRange(loop, first, last, run); });
}

// dx (shape `in`) = sum of dy (shape `out`) over the dims `in` was broadcast along.
template <typename T>
void SumToShape(const T* dy, const graph::Shape& out, T* dx, const graph::Shape& in) {
  std::fill(dx, dx + graph::NumElements(in), T(0));
  const StridedLoop<2> loop =
      MakeStridedLoop<2>(out, {DenseStrides(out), BroadcastStrides(in, out)});
  const int64_t sy = loop.inner_strides[0], sx = loop.inner_strides[1];
  ForEachRun(loop, [&](const std::array<int64_t, 2>& at) {
    const T* src = dy + at[0];
    T* dst = dx + at[1];
    if (sx == 0) {
      T sum = 0;
      for (int64_t j = 0; j < loop.inner; ++j) sum += src[j * sy];
      *dst += sum;
    } else {
      for (int64_t j = 0; j < loop.inner; ++j) dst[j * sx] += src[j * sy];
    }
  });
}

}  // namespace tessera::exec::cpu
