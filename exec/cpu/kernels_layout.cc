// CPU kernels of the layout family (see kernels.h for the conventions): the pure copies
// (Identity, Reshape, Flatten, Squeeze, Unsqueeze), Transpose and Expand. Slice and Pad are in
// layout_slice.cc; Concat, Split and Gather in layout_concat.cc.
//
// Layout kernels move elements of any dtype (integer tensors in their own width); their
// backward is the inverse re-layout of dY and reads no input or output values.
#include <cstring>

#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/broadcast_impl.h"

namespace tessera::exec::cpu {
namespace {

// One strided run: dst[j * sd] = src[j * ss] for j < n.
template <typename U>
void CopyRun(U* dst, int64_t sd, const U* src, int64_t ss, int64_t n) {
  if (sd == 1 && ss == 1) {
    std::copy(src, src + n, dst);
  } else {
    for (int64_t j = 0; j < n; ++j) dst[j * sd] = src[j * ss];
  }
}

// Identity, Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same order.
template <typename T>
absl::Status CopyForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  if (x.size() != y.size()) {
    return KernelInvalid(a.node,
                         absl::StrCat("input has ", x.size(), " elements, output ", y.size(),
                                      " (run shape inference on the graph first)"));
  }
  if (x.data != y.data && x.size() > 0) {
    std::memcpy(static_cast<void*>(y.data), static_cast<const void*>(x.data),
                static_cast<size_t>(x.size() * StoredElementBytes(x)));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status CopyBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
  } else if (dy != dx.data) {
    std::copy(dy, dy + dx.size(), dx.data);
  }
  return absl::OkStatus();
}

// The permutation of a Transpose node (an empty attribute reverses the axes), checked.
absl::StatusOr<std::vector<int64_t>> Permutation(const graph::Node& node, int64_t rank) {
  std::vector<int64_t> perm = std::get<graph::PermAttrs>(node.attrs).perm;
  if (perm.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (static_cast<int64_t>(perm.size()) != rank || p < 0 || p >= rank || seen[p]) {
      return KernelInvalid(node, absl::StrCat("perm is not a permutation of 0..", rank - 1,
                                              " (run shape inference on the graph first)"));
    }
    seen[p] = true;
  }
  return perm;
}

// Square tiles of a transposing copy: both sides stay in cache while one is read across rows.
inline constexpr int64_t kTransposeTile = 32;

// dst (dense) = src with its axes permuted: dst[i_0, i_1, ...] = src[... i_d at axis perm[d] ...].
template <typename U>
void PermuteCopy(const U* src, const graph::Shape& src_shape, const std::vector<int64_t>& perm,
                 U* dst, int threads) {
  const std::vector<int64_t> dense = DenseStrides(src_shape);
  graph::Shape dst_shape;
  std::vector<int64_t> src_strides;
  for (int64_t p : perm) {
    dst_shape.push_back(src_shape[p]);
    src_strides.push_back(dense[p]);
  }
  const StridedLoop<2> loop =
      MakeStridedLoop<2>(dst_shape, {DenseStrides(dst_shape), std::move(src_strides)});
  const int64_t si = loop.inner_strides[1];
  // Step 1: the outer dim along which src is contiguous, if the inner run is not.
  int64_t tile_dim = -1;
  for (size_t d = 0; si != 1 && d < loop.outer.size(); ++d) {
    if (loop.outer_strides[1][d] == 1) tile_dim = static_cast<int64_t>(d);
  }
  if (tile_dim < 0) {
    ParallelForEachRun(loop, threads, [&](const std::array<int64_t, 2>& at) {
      CopyRun(dst + at[0], 1, src + at[1], si, loop.inner);
    });
    return;
  }
  // Step 2: the other outer dims as runs, each a 2-D transpose of [P, I] tiled into squares.
  StridedLoop<2> rest = loop;
  rest.outer.erase(rest.outer.begin() + tile_dim);
  for (auto& st : rest.outer_strides) st.erase(st.begin() + tile_dim);
  const int64_t num_p = loop.outer[tile_dim], dp = loop.outer_strides[0][tile_dim];
  const int64_t num_i = loop.inner;
  const auto tiles = [&](const std::array<int64_t, 2>& at, int64_t p0, int64_t p1) {
    for (int64_t pb = p0; pb < p1; pb += kTransposeTile) {
      const int64_t pe = std::min(pb + kTransposeTile, p1);
      for (int64_t ib = 0; ib < num_i; ib += kTransposeTile) {
        const int64_t ie = std::min(ib + kTransposeTile, num_i);
        for (int64_t p = pb; p < pe; ++p)
          for (int64_t i = ib; i < ie; ++i) dst[at[0] + p * dp + i] = src[at[1] + p + i * si];
      }
    }
  };
  if (rest.runs() >= 2 * threads) {
    ParallelForEachRun(rest, threads,
                       [&](const std::array<int64_t, 2>& at) { tiles(at, 0, num_p); });
  } else {
    ForEachRun(rest, [&](const std::array<int64_t, 2>& at) {
      ParallelFor(threads, num_p,
                  std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(num_i, 1)),
                  [&](int64_t p0, int64_t p1) { tiles(at, p0, p1); });
    });
  }
}

// Y = X with its axes permuted.
template <typename T>
absl::Status TransposeForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  TS_ASSIGN_OR_RETURN(const std::vector<int64_t> perm,
                      Permutation(a.node, static_cast<int64_t>(x.shape.size())));
  WithStoredType(x, [&](auto tag) {
    using U = decltype(tag);
    PermuteCopy(reinterpret_cast<const U*>(x.data), x.shape, perm, reinterpret_cast<U*>(y.data),
                a.ctx.threads);
  });
  return absl::OkStatus();
}

// dX = dY permuted back by the inverse permutation.
template <typename T>
absl::Status TransposeBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
    return absl::OkStatus();
  }
  TS_ASSIGN_OR_RETURN(const std::vector<int64_t> perm,
                      Permutation(a.node, static_cast<int64_t>(dx.shape.size())));
  std::vector<int64_t> inverse(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) inverse[perm[d]] = static_cast<int64_t>(d);
  PermuteCopy(dy, a.outputs[0].shape, inverse, dx.data, a.ctx.threads);
  return absl::OkStatus();
}

// Y = X broadcast to the output shape (numpy rules).
template <typename T>
absl::Status ExpandForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  const StridedLoop<2> loop =
      MakeStridedLoop<2>(y.shape, {DenseStrides(y.shape), BroadcastStrides(x.shape, y.shape)});
  WithStoredType(x, [&](auto tag) {
    using U = decltype(tag);
    U* dst = reinterpret_cast<U*>(y.data);
    const U* src = reinterpret_cast<const U*>(x.data);
    ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 2>& at) {
      CopyRun(dst + at[0], loop.inner_strides[0], src + at[1], loop.inner_strides[1], loop.inner);
    });
  });
  return absl::OkStatus();
}

// dX = dY summed over the broadcast dims.
template <typename T>
absl::Status ExpandBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) {
    std::fill(dx.data, dx.data + dx.size(), T(0));
  } else {
    SumToShape(dy, a.outputs[0].shape, dx.data, dx.shape);
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterLayoutKernels(KernelTable<T>& table) {
  using graph::OpKind;
  for (OpKind kind : {OpKind::kIdentity, OpKind::kReshape, OpKind::kFlatten, OpKind::kSqueeze,
                      OpKind::kUnsqueeze}) {
    Slot(table, kind) = Checked<T, &CopyForward<T>, &CopyBackward<T>>();
  }
  Slot(table, OpKind::kTranspose) = Checked<T, &TransposeForward<T>, &TransposeBackward<T>>();
  Slot(table, OpKind::kExpand) = Checked<T, &ExpandForward<T>, &ExpandBackward<T>>();
  RegisterSliceKernels<T>(table);
  RegisterConcatGatherKernels<T>(table);
}

template void RegisterLayoutKernels<float>(KernelTable<float>&);
template void RegisterLayoutKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
