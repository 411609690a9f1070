// Internal to ONNX import: index arithmetic shared by the folding kernels.
//
//   std::vector<int64_t> src = BroadcastIndex({2, 3}, {3});   // {0,1,2,0,1,2}
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/shape.h"

namespace tessera::graph::onnx_import {

// Row-major strides of `shape`.
inline std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// For each element of `out` (row-major), the flat index of the element of `in`
// it reads under numpy broadcasting (`in` right-aligned, size-1 axes repeated).
inline std::vector<int64_t> BroadcastIndex(const Shape& out, const Shape& in) {
  const size_t rank = out.size();
  const size_t offset = rank - in.size();
  const std::vector<int64_t> in_strides = Strides(in);
  std::vector<int64_t> step(rank, 0);
  for (size_t i = offset; i < rank; ++i) step[i] = in[i - offset] == 1 ? 0 : in_strides[i - offset];
  const int64_t n = NumElements(out);
  std::vector<int64_t> result(n > 0 ? n : 0);
  std::vector<int64_t> counter(rank, 0);
  int64_t index = 0;
  for (int64_t k = 0; k < n; ++k) {
    result[k] = index;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      index += step[d];
      if (++counter[d] < out[d]) break;
      index -= step[d] * counter[d];
      counter[d] = 0;
    }
  }
  return result;
}

}  // namespace tessera::graph::onnx_import
