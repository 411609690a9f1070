// CPU kernels of Concat, Split (each other's backward) and Gather (backward: scatter-add).
// See kernels.h for the conventions.
#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/broadcast_impl.h"

namespace tessera::exec::cpu {
namespace {

// A tensor seen as [outer, axis, inner] around one axis.
struct AxisView {
  int64_t outer = 1, axis = 1, inner = 1;
};

AxisView ViewAround(const graph::Shape& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) v.outer *= shape[d];
    if (d == axis) v.axis = shape[d];
    if (d > axis) v.inner *= shape[d];
  }
  return v;
}

// One piece of a concatenation: its data and its extent along the axis.
template <typename U>
struct Piece {
  U* data;
  int64_t axis;
};

// Copies between the whole ([outer, total, inner]) and its pieces ([outer, piece.axis, inner],
// laid side by side along the axis): gather = true fills `whole`, false fills the pieces.
// A piece with data nullptr is skipped (gather: left as it is; scatter: not wanted).
template <typename U>
void ConcatCopy(U* whole, const std::vector<Piece<U>>& pieces, const AxisView& v, bool gather,
                int threads) {
  ParallelFor(threads, v.outer,
              std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(v.axis * v.inner, 1)),
              [&](int64_t o0, int64_t o1) {
                for (int64_t o = o0; o < o1; ++o) {
                  U* w = whole + o * v.axis * v.inner;
                  for (const Piece<U>& p : pieces) {
                    const int64_t n = p.axis * v.inner;
                    if (p.data != nullptr) {
                      U* piece = p.data + o * n;
                      if (gather) {
                        std::copy(piece, piece + n, w);
                      } else {
                        std::copy(w, w + n, piece);
                      }
                    }
                    w += n;
                  }
                }
              });
}

absl::StatusOr<int64_t> ConcatAxis(const graph::Node& node, int64_t rank) {
  return KernelAxis(node, std::get<graph::AxisAttrs>(node.attrs).axis, rank);
}

template <typename T>
absl::Status ConcatForward(const ForwardArgs<T>& a) {
  const Tensor<T>& y = a.outputs[0];
  for (const Tensor<T>& x : a.inputs) TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  TS_ASSIGN_OR_RETURN(const int64_t axis, ConcatAxis(a.node, static_cast<int64_t>(y.shape.size())));
  WithStoredType(y, [&](auto tag) {
    using U = decltype(tag);
    std::vector<Piece<U>> pieces;
    for (const Tensor<T>& x : a.inputs)
      pieces.push_back({reinterpret_cast<U*>(x.data), x.shape[axis]});
    ConcatCopy(reinterpret_cast<U*>(y.data), pieces, ViewAround(y.shape, axis), true,
               a.ctx.threads);
  });
  return absl::OkStatus();
}

// dX_i = the slab of dY that input i filled.
template <typename T>
absl::Status ConcatBackward(const BackwardArgs<T>& a) {
  const T* dy = GradOutput(a, 0);
  const graph::Shape& out = a.outputs[0].shape;
  TS_ASSIGN_OR_RETURN(const int64_t axis, ConcatAxis(a.node, static_cast<int64_t>(out.size())));
  std::vector<Piece<T>> pieces;
  for (const Tensor<T>& dx : a.grad_inputs) {
    if (dy == nullptr && dx.present()) std::fill(dx.data, dx.data + dx.size(), T(0));
    pieces.push_back({dx.data, dx.shape[axis]});
  }
  if (dy != nullptr) {
    ConcatCopy(const_cast<T*>(dy), pieces, ViewAround(out, axis), false, a.ctx.threads);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status SplitForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  for (const Tensor<T>& y : a.outputs) TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      KernelAxis(a.node, std::get<graph::SplitAttrs>(a.node.attrs).axis,
                                 static_cast<int64_t>(x.shape.size())));
  WithStoredType(x, [&](auto tag) {
    using U = decltype(tag);
    std::vector<Piece<U>> pieces;
    for (const Tensor<T>& y : a.outputs)
      pieces.push_back({reinterpret_cast<U*>(y.data), y.shape[axis]});
    ConcatCopy(reinterpret_cast<U*>(x.data), pieces, ViewAround(x.shape, axis), false,
               a.ctx.threads);
  });
  return absl::OkStatus();
}

// dX = the dY_j side by side; a zero gradient dY_j fills its slab with zeros.
template <typename T>
absl::Status SplitBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const int64_t axis,
                      KernelAxis(a.node, std::get<graph::SplitAttrs>(a.node.attrs).axis,
                                 static_cast<int64_t>(dx.shape.size())));
  std::fill(dx.data, dx.data + dx.size(), T(0));
  std::vector<Piece<T>> pieces;
  for (size_t j = 0; j < a.outputs.size(); ++j) {
    pieces.push_back({const_cast<T*>(GradOutput(a, j)), a.outputs[j].shape[axis]});
  }
  ConcatCopy(dx.data, pieces, ViewAround(dx.shape, axis), true, a.ctx.threads);
  return absl::OkStatus();
}

// Gather(data, indices, axis): Y[o, m, i] = data[o, indices[m], i] with data seen as
// [outer, N, inner] around the axis. Indices may be negative (counting from the end); one out
// of [-N, N) is an error naming its position and value.
template <typename T>
absl::StatusOr<std::vector<int64_t>> GatherIndices(const graph::Node& node, const Tensor<T>& idx,
                                                   int64_t n) {
  std::vector<int64_t> out(idx.size());
  for (int64_t m = 0; m < idx.size(); ++m) {
    const int64_t v = idx.index(m);
    if (v < -n || v >= n) {
      return KernelInvalid(node,
                           absl::StrCat("index ", v, " at position ", m,
                                        " of the indices is out of range for an axis of size ", n,
                                        " (valid: ", -n, "..", n - 1, ")"));
    }
    out[m] = v < 0 ? v + n : v;
  }
  return out;
}

absl::StatusOr<int64_t> GatherAxis(const graph::Node& node, const graph::Shape& data) {
  return KernelAxis(node, std::get<graph::AxisAttrs>(node.attrs).axis,
                    static_cast<int64_t>(data.size()));
}

template <typename T>
absl::Status GatherForward(const ForwardArgs<T>& a) {
  const Tensor<T>& data = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_RETURN_IF_ERROR(RequireSameStorage(a.node, data, y));
  TS_ASSIGN_OR_RETURN(const int64_t axis, GatherAxis(a.node, data.shape));
  const AxisView v = ViewAround(data.shape, axis);
  TS_ASSIGN_OR_RETURN(const std::vector<int64_t> idx, GatherIndices(a.node, a.inputs[1], v.axis));
  const int64_t m_count = static_cast<int64_t>(idx.size());
  WithStoredType(data, [&](auto tag) {
    using U = decltype(tag);
    const U* src = reinterpret_cast<const U*>(data.data);
    U* dst = reinterpret_cast<U*>(y.data);
    // Rows of Y: (o, m) pairs, each a copy of `inner` elements.
    ParallelFor(a.ctx.threads, v.outer * m_count,
                std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(v.inner, 1)),
                [&](int64_t r0, int64_t r1) {
                  for (int64_t r = r0; r < r1; ++r) {
                    const int64_t o = r / m_count, m = r % m_count;
                    const U* from = src + (o * v.axis + idx[m]) * v.inner;
                    std::copy(from, from + v.inner, dst + r * v.inner);
                  }
                });
  });
  return absl::OkStatus();
}

// dData = 0, then dData[o, indices[m], i] += dY[o, m, i] (repeated indices accumulate).
template <typename T>
absl::Status GatherBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  std::fill(dx.data, dx.data + dx.size(), T(0));
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const int64_t axis, GatherAxis(a.node, dx.shape));
  const AxisView v = ViewAround(dx.shape, axis);
  TS_ASSIGN_OR_RETURN(const std::vector<int64_t> idx, GatherIndices(a.node, a.inputs[1], v.axis));
  const int64_t m_count = static_cast<int64_t>(idx.size());
  // Different o never share a destination row, so the outer positions split over threads.
  ParallelFor(a.ctx.threads, v.outer,
              std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(m_count * v.inner, 1)),
              [&](int64_t o0, int64_t o1) {
                for (int64_t o = o0; o < o1; ++o) {
                  for (int64_t m = 0; m < m_count; ++m) {
                    const T* from = dy + (o * m_count + m) * v.inner;
                    T* to = dx.data + (o * v.axis + idx[m]) * v.inner;
                    for (int64_t i = 0; i < v.inner; ++i) to[i] += from[i];
                  }
                }
              });
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterConcatGatherKernels(KernelTable<T>& table) {
  using graph::OpKind;
  Slot(table, OpKind::kConcat) = Checked<T, &ConcatForward<T>, &ConcatBackward<T>>();
  Slot(table, OpKind::kSplit) = Checked<T, &SplitForward<T>, &SplitBackward<T>>();
  Slot(table, OpKind::kGather) = Checked<T, &GatherForward<T>, &GatherBackward<T>>();
}

template void RegisterConcatGatherKernels<float>(KernelTable<float>&);
template void RegisterConcatGatherKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
