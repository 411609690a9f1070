// Internal to the CPU LSTM kernels (kernels_recurrent.cc has the equations): the plan of one
// call, how its work is split over threads, and the helpers lstm_forward.cc and
// lstm_backward.cc share.
//
//   TS_ASSIGN_OR_RETURN(const Lstm l, PlanLstm(a.node, a.inputs));
//   ForEachPart(l, a.ctx.threads, [&](const LstmPart& p) { /* direction p.d, rows p.r0..p.r1 */ });
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/elementwise_impl.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu::lstm {

// Below this many multiply-adds in the recurrent products of one direction (T * B * 4H * H),
// a call stays on the calling thread.
inline constexpr int64_t kMinParallelMacs = int64_t{1} << 20;

struct Lstm {
  int64_t t, b, i, h, dirs, layout;
  graph::LstmDirection direction;
  std::vector<int64_t> lens;  // per batch row
  int64_t max_len = 0;
  bool full = true;     // every row runs all T steps
  bool uniform = true;  // layout 0 and equal lengths: each step's rows are one block of X rows

  int64_t XRow(int64_t time, int64_t row) const {
    return layout == 0 ? time * b + row : row * t + time;
  }
  int64_t YOffset(int64_t time, int64_t d, int64_t row) const {
    return (layout == 0 ? (time * dirs + d) * b + row : (row * t + time) * dirs + d) * h;
  }
  int64_t StateOffset(int64_t d, int64_t row) const {
    return (layout == 0 ? d * b + row : row * dirs + d) * h;
  }
  bool Reverse(int64_t d) const { return direction == graph::LstmDirection::kReverse || d == 1; }
  // The time step direction d visits at step k for `row`, or -1 when the row's sequence is over.
  int64_t Time(int64_t d, int64_t k, int64_t row) const {
    if (k >= lens[row]) return -1;
    return Reverse(d) ? lens[row] - 1 - k : k;
  }
};

template <typename T>
absl::StatusOr<Lstm> PlanLstm(const graph::Node& node, absl::Span<const Tensor<T>> in) {
  const auto& a = std::get<graph::LstmAttrs>(node.attrs);
  const graph::Shape& x = in[0].shape;
  Lstm l{.t = a.layout == 0 ? x[0] : x[1],
         .b = a.layout == 0 ? x[1] : x[0],
         .i = x[2],
         .h = a.hidden_size,
         .dirs = a.direction == graph::LstmDirection::kBidirectional ? 2 : 1,
         .layout = a.layout,
         .direction = a.direction};
  l.lens.assign(l.b, l.t);
  if (in.size() > 4 && in[4].present()) {
    for (int64_t r = 0; r < l.b; ++r) {
      l.lens[r] = in[4].index(r);
      if (l.lens[r] < 0 || l.lens[r] > l.t) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node.name, "' (LSTM): sequence_lens[", r, "] is ", l.lens[r],
                         "; it must lie in [0, ", l.t, "] (the time axis of X)"));
      }
    }
  }
  for (int64_t len : l.lens) {
    l.max_len = std::max(l.max_len, len);
    l.full = l.full && len == l.t;
    l.uniform = l.uniform && len == l.lens[0];
  }
  l.uniform = l.uniform && l.layout == 0;
  return l;
}

// One thread's share of the recurrence: direction d, batch rows [r0, r1). The rows of a batch
// never interact, so a part runs all its steps without waiting for the others.
struct LstmPart {
  int64_t d, r0, r1;
};

// Calls fn(part) for parts covering every (direction, row), in parallel over up to `threads`
// threads: one part per direction, the rows split further while there are threads left.
template <typename Fn>
void ForEachPart(const Lstm& l, int threads, Fn&& fn) {
  const bool parallel = l.t * l.b * 4 * l.h * l.h >= kMinParallelMacs;
  const int64_t blocks =
      parallel ? std::clamp<int64_t>(threads / l.dirs, 1, std::max<int64_t>(l.b, 1)) : 1;
  std::vector<LstmPart> parts;
  for (int64_t d = 0; d < l.dirs; ++d)
    for (int64_t k = 0; k < blocks; ++k)
      parts.push_back({d, k * l.b / blocks, (k + 1) * l.b / blocks});
  ParallelFor(parallel ? threads : 1, static_cast<int64_t>(parts.size()), 1,
              [&](int64_t begin, int64_t end) {
                for (int64_t p = begin; p < end; ++p) fn(parts[p]);
              });
}

template <typename T>
const Tensor<T>* Optional(absl::Span<const Tensor<T>> v, size_t i) {
  return i < v.size() && v[i].present() ? &v[i] : nullptr;
}

// Copies direction d of an initial state (h0/c0 in its layout) into a [B, H] matrix, or zeros.
template <typename T>
void GatherState(const Lstm& l, const Tensor<T>* s, int64_t d, T* out) {
  for (int64_t r = 0; r < l.b; ++r) {
    if (s == nullptr) {
      std::fill(out + r * l.h, out + (r + 1) * l.h, T(0));
    } else {
      std::copy(s->data + l.StateOffset(d, r), s->data + l.StateOffset(d, r) + l.h, out + r * l.h);
    }
  }
}

// Writes a [B, H] matrix into direction d of a state output (Y_h, Y_c, dh0, dc0) if present.
template <typename T>
void ScatterState(const Lstm& l, const T* in, int64_t d, const Tensor<T>* s) {
  if (s == nullptr) return;
  for (int64_t r = 0; r < l.b; ++r)
    std::copy(in + r * l.h, in + (r + 1) * l.h, s->data + l.StateOffset(d, r));
}

// The cell state before step k of direction d for `row`: c0's row at step 0, else the cell
// state the previous step left (cells: direction d's [T*B, H] in X's row order).
template <typename T>
const T* PreviousCell(const Lstm& l, int64_t d, int64_t k, int64_t row, const T* cells,
                      const T* c0) {
  return k == 0 ? c0 + row * l.h : cells + l.XRow(l.Time(d, k - 1, row), row) * l.h;
}

// The steps rows [r0, r1) visit: the longest of their lengths.
inline int64_t PartSteps(const Lstm& l, const LstmPart& p) {
  int64_t steps = 0;
  for (int64_t row = p.r0; row < p.r1; ++row) steps = std::max(steps, l.lens[row]);
  return steps;
}

template <typename T>
absl::Status LstmForward(const ForwardArgs<T>& a);  // lstm_forward.cc
template <typename T>
absl::Status LstmBackward(const BackwardArgs<T>& a);  // lstm_backward.cc

}  // namespace tessera::exec::cpu::lstm
