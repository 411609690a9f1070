// CPU kernels of Slice (ONNX semantics: negative starts/ends, clamping, negative steps) and Pad
// (constant, reflect, edge; negative pads crop). See kernels.h for the conventions.
#include <cstdlib>

#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/broadcast_impl.h"

namespace tessera::exec::cpu {
namespace {

// ---- Slice ----------------------------------------------------------------------------------

// Where a slice reads X: Y[i...] = X[offset + sum_d i_d * strides[d]].
struct SliceMap {
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

// The first element and step of every axis, clamped as shape inference does (graph/infer).
absl::StatusOr<SliceMap> MakeSliceMap(const graph::Node& node, const graph::Shape& in) {
  const auto& s = std::get<graph::SliceAttrs>(node.attrs);
  const int64_t rank = static_cast<int64_t>(in.size());
  SliceMap map{.strides = DenseStrides(in)};
  const std::vector<int64_t> dense = map.strides;
  for (size_t i = 0; i < s.starts.size(); ++i) {
    TS_ASSIGN_OR_RETURN(
        const int64_t axis,
        KernelAxis(node, s.axes.empty() ? static_cast<int64_t>(i) : s.axes[i], rank));
    const int64_t dim = in[axis];
    const int64_t step = s.steps.empty() ? 1 : s.steps[i];
    int64_t start = s.starts[i] < 0 ? (s.starts[i] < -dim ? -1 : s.starts[i] + dim) : s.starts[i];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    map.offset += start * dense[axis];
    map.strides[axis] = step * dense[axis];
  }
  return map;
}

template <typename T>
absl::Status SliceForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  TS_ASSIGN_OR_RETURN(const SliceMap map, MakeSliceMap(a.node, x.shape));
  const StridedLoop<2> loop = MakeStridedLoop<2>(y.shape, {DenseStrides(y.shape), map.strides});
  WithStoredType(x, [&](auto tag) {
    using U = decltype(tag);
    U* dst = reinterpret_cast<U*>(y.data);
    const U* src = reinterpret_cast<const U*>(x.data) + map.offset;
    ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 2>& at) {
      const int64_t ss = loop.inner_strides[1];
      for (int64_t j = 0; j < loop.inner; ++j) dst[at[0] + j] = src[at[1] + j * ss];
    });
  });
  return absl::OkStatus();
}

// dX = 0 except at the sliced elements, which receive dY (each at most once).
template <typename T>
absl::Status SliceBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  std::fill(dx.data, dx.data + dx.size(), T(0));
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const SliceMap map, MakeSliceMap(a.node, dx.shape));
  const graph::Shape& out = a.outputs[0].shape;
  const StridedLoop<2> loop = MakeStridedLoop<2>(out, {DenseStrides(out), map.strides});
  T* dst = dx.data + map.offset;
  ParallelForEachRun(loop, a.ctx.threads, [&](const std::array<int64_t, 2>& at) {
    const int64_t sd = loop.inner_strides[1];
    for (int64_t j = 0; j < loop.inner; ++j) dst[at[1] + j * sd] = dy[at[0] + j];
  });
  return absl::OkStatus();
}

// ---- Pad ------------------------------------------------------------------------------------

// For every axis, the X index each Y index reads, or -1 for the constant.
absl::StatusOr<std::vector<std::vector<int64_t>>> PadSources(const graph::Node& node,
                                                             const graph::Shape& in,
                                                             const graph::Shape& out) {
  const auto& attrs = std::get<graph::PadAttrs>(node.attrs);
  const int64_t rank = static_cast<int64_t>(in.size());
  if (static_cast<int64_t>(attrs.pads.size()) != 2 * rank) {
    return KernelInvalid(node, absl::StrCat("pads has ", attrs.pads.size(), " values; rank ", rank,
                                            " needs ", 2 * rank));
  }
  std::vector<std::vector<int64_t>> sources(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t dim = in[d];
    if (dim == 0 && out[d] > 0 && attrs.mode != graph::PadMode::kConstant) {
      return KernelInvalid(
          node, absl::StrCat("cannot ", attrs.mode == graph::PadMode::kReflect ? "reflect" : "edge",
                             "-pad axis ", d, ", which is empty"));
    }
    const int64_t period = 2 * (dim - 1);  // reflect: ... 2 1 [0 1 2] 1 0 ...
    for (int64_t o = 0; o < out[d]; ++o) {
      int64_t i = o - attrs.pads[d];
      if (i < 0 || i >= dim) {
        if (attrs.mode == graph::PadMode::kConstant) {
          i = -1;
        } else if (attrs.mode == graph::PadMode::kEdge || period == 0) {
          i = std::clamp<int64_t>(i, 0, dim - 1);
        } else {
          i = ((i % period) + period) % period;
          if (i >= dim) i = period - i;
        }
      }
      sources[d].push_back(i);
    }
  }
  return sources;
}

// Calls fn(y_index, x_index or -1) for every Y element of rows [first, last): a row is one
// position of all axes but the last.
template <typename Fn>
void ForPadRows(const std::vector<std::vector<int64_t>>& sources, const graph::Shape& in,
                const graph::Shape& out, int64_t first, int64_t last, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(out.size());
  const std::vector<int64_t> strides = DenseStrides(in);
  const int64_t row = rank == 0 ? 1 : out[rank - 1];
  for (int64_t r = first; r < last; ++r) {
    // Step 1: the X offset of this row's outer position (-1: in the constant border).
    int64_t base = 0, rest = r;
    for (int64_t d = rank - 2; d >= 0 && base >= 0; --d) {
      const int64_t src = sources[d][rest % out[d]];
      rest /= out[d];
      base = src < 0 ? -1 : base + src * strides[d];
    }
    // Step 2: along the last axis.
    for (int64_t j = 0; j < row; ++j) {
      const int64_t src = rank == 0 ? 0 : sources[rank - 1][j];
      fn(r * row + j, (base < 0 || src < 0) ? -1 : base + src);
    }
  }
}

int64_t PadRows(const graph::Shape& out) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out.size(); ++d) rows *= out[d];
  return rows;
}

template <typename T>
absl::Status PadForward(const ForwardArgs<T>& a) {
  const Tensor<T>& x = a.inputs[0];
  const Tensor<T>& y = a.outputs[0];
  TS_RETURN_IF_ERROR(RequireSameStorage(a.node, x, y));
  TS_ASSIGN_OR_RETURN(auto sources, PadSources(a.node, x.shape, y.shape));
  const double value = std::get<graph::PadAttrs>(a.node.attrs).value;
  const int64_t row = y.shape.empty() ? 1 : y.shape.back();
  WithStoredType(x, [&](auto tag) {
    using U = decltype(tag);
    U* dst = reinterpret_cast<U*>(y.data);
    const U* src = reinterpret_cast<const U*>(x.data);
    const U fill = static_cast<U>(value);
    ParallelFor(a.ctx.threads, PadRows(y.shape), kMinParallelElements / std::max<int64_t>(row, 1),
                [&](int64_t first, int64_t last) {
                  ForPadRows(sources, x.shape, y.shape, first, last,
                             [&](int64_t o, int64_t i) { dst[o] = i < 0 ? fill : src[i]; });
                });
  });
  return absl::OkStatus();
}

// dX = the sum of dY over the Y elements that read each X element (several with reflect/edge).
template <typename T>
absl::Status PadBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  std::fill(dx.data, dx.data + dx.size(), T(0));
  const T* dy = GradOutput(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  const graph::Shape& out = a.outputs[0].shape;
  TS_ASSIGN_OR_RETURN(auto sources, PadSources(a.node, dx.shape, out));
  ForPadRows(sources, dx.shape, out, 0, PadRows(out), [&](int64_t o, int64_t i) {
    if (i >= 0) dx.data[i] += dy[o];
  });
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterSliceKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kSlice) = Checked<T, &SliceForward<T>, &SliceBackward<T>>();
  Slot(table, graph::OpKind::kPad) = Checked<T, &PadForward<T>, &PadBackward<T>>();
}

template void RegisterSliceKernels<float>(KernelTable<float>&);
template void RegisterSliceKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
