// Internal device helpers shared by the .cu files: grid sizing and index decomposition.
#pragma once

#include <cstdint>

#include "tessera/exec/cuda/launch.h"

namespace tessera::exec::cuda {

inline constexpr int kThreads = 256;

inline int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

#define TS_GRID_LOOP(i, n)                                                         \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

// Offset of linear index `linear` of `space` in `view`.
__device__ inline int64_t ViewOffset(int64_t linear, const Dims& space, const View& view) {
  int64_t off = view.offset;
  for (int d = space.rank - 1; d >= 0; --d) {
    const int64_t i = linear % space.d[d];
    linear /= space.d[d];
    off += i * view.s[d];
  }
  return off;
}

}  // namespace tessera::exec::cuda
