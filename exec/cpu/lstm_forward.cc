// The CPU LSTM forward (equations in kernels_recurrent.cc). Per direction, the input projection
// X W^T of every step is one OpenBLAS product written straight into the gate state; then each
// part (direction, block of batch rows; lstm_impl.h) runs its steps on one thread: the recurrent
// product h R^T of its rows (Eigen's kernel with R packed once per call: packed_matrix_impl.h),
// then the cell math of its rows, vectorised. No hand-over between threads inside a step.
#include <algorithm>
#include <vector>

#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kept_array_impl.h"
#include "tessera/exec/cpu/lstm_impl.h"
#include "tessera/exec/cpu/packed_matrix_impl.h"

namespace tessera::exec::cpu::lstm {
namespace {

// Per-call buffers; the [B, ...] ones hold every direction, direction d at d * B rows.
template <typename T>
struct ForwardBuffers {
  std::vector<T*> gates, cells;                            // per direction: state.reals
  std::vector<const PackedMatrix<T, Eigen::RowMajor>*> r;  // per direction: R [4H, H], packed
  T* bias;  // [dirs, 4H]: Wb + Rb
  T* h;     // [dirs, B, H]: the hidden state, h0 on entry
  T* c0;    // [dirs, B, H]
  T* rec;   // [dirs, B, 4H]: the step's h R^T
};

template <typename T>
struct ForwardScratch {
  ScratchVector<T> bias, h, c0, rec;
  PackedMatrix<T, Eigen::RowMajor> r[2];
};

// One row of one step: activates the gates in place (g holds X_t W^T on entry), writes c and h.
template <typename T>
void CellForward(int64_t H, T* g, const T* rec, const T* bias, const T* c_prev, T* c, T* h) {
  ArrayMap<T> sig(g, 3 * H), cand(g + 3 * H, H);
  sig = (sig + ConstArrayMap<T>(rec, 3 * H) + ConstArrayMap<T>(bias, 3 * H)).logistic();
  cand = (cand + ConstArrayMap<T>(rec + 3 * H, H) + ConstArrayMap<T>(bias + 3 * H, H)).tanh();
  ArrayMap<T> cv(c, H);
  cv = sig.segment(2 * H, H) * ConstArrayMap<T>(c_prev, H) + sig.head(H) * cand;
  ArrayMap<T>(h, H) = sig.segment(H, H) * cv.tanh();
}

// Every step of one part.
template <typename T>
void ForwardPart(const Lstm& l, const LstmPart& p, const ForwardArgs<T>& a,
                 const ForwardBuffers<T>& buf) {
  const int64_t H = l.h, G = 4 * l.h, d = p.d, n = p.r1 - p.r0;
  T* h = buf.h + d * l.b * H;
  T* rec = buf.rec + d * l.b * G;
  const T* c0 = buf.c0 + d * l.b * H;
  const T* bias = buf.bias + d * G;
  T* gates = buf.gates[d];
  T* cells = buf.cells[d];
  T* y = a.outputs[0].data;
  const int64_t steps = PartSteps(l, p);
  for (int64_t k = 0; k < steps; ++k) {
    buf.r[d]->Multiply(h + p.r0 * H, H, n, rec + p.r0 * G, G);  // rec^T = R h^T
    for (int64_t row = p.r0; row < p.r1; ++row) {
      const int64_t time = l.Time(d, k, row);
      if (time < 0) continue;
      const int64_t x = l.XRow(time, row);
      T* hr = h + row * H;
      CellForward<T>(H, gates + x * G, rec + row * G, bias, PreviousCell(l, d, k, row, cells, c0),
                     cells + x * H, hr);
      std::copy(hr, hr + H, y + l.YOffset(time, d, row));
    }
  }
}

// Direction d's gate state starts as X W^T; its bias, h0 and c0 go to the buffers.
template <typename T>
void PrepareDirection(const Lstm& l, int64_t d, const ForwardArgs<T>& a,
                      const ForwardBuffers<T>& buf) {
  const int64_t G = 4 * l.h;
  Gemm<T>(false, true, l.t * l.b, G, l.i, T(1), a.inputs[0].data, l.i,
          a.inputs[1].data + d * G * l.i, l.i, T(0), buf.gates[d], G);
  T* bias = buf.bias + d * G;
  if (const Tensor<T>* b = Optional(a.inputs, 3)) {
    const T* wb = b->data + d * 2 * G;
    ArrayMap<T>(bias, G) = ConstArrayMap<T>(wb, G) + ConstArrayMap<T>(wb + G, G);
  } else {
    std::fill(bias, bias + G, T(0));
  }
  GatherState(l, Optional(a.inputs, 5), d, buf.h + d * l.b * l.h);
  GatherState(l, Optional(a.inputs, 6), d, buf.c0 + d * l.b * l.h);
}

// Y_h and Y_c of direction d: the state after each row's last step.
template <typename T>
void WriteFinalState(const Lstm& l, int64_t d, const ForwardArgs<T>& a,
                     const ForwardBuffers<T>& buf) {
  ScatterState(l, buf.h + d * l.b * l.h, d, Optional(a.outputs, 1));
  const Tensor<T>* yc = Optional(a.outputs, 2);
  if (yc == nullptr) return;
  for (int64_t row = 0; row < l.b; ++row) {
    const T* c = PreviousCell(l, d, l.lens[row], row, buf.cells[d], buf.c0 + d * l.b * l.h);
    std::copy(c, c + l.h, yc->data + l.StateOffset(d, row));
  }
}

}  // namespace

template <typename T>
absl::Status LstmForward(const ForwardArgs<T>& a) {
  absl::StatusOr<Lstm> planned = PlanLstm(a.node, a.inputs);
  if (!planned.ok()) return planned.status();
  const Lstm& l = *planned;
  if (!l.full) std::fill(a.outputs[0].data, a.outputs[0].data + a.outputs[0].size(), T(0));
  thread_local ForwardScratch<T> scratch;
  const int64_t G = 4 * l.h, rows = l.t * l.b;
  ForwardBuffers<T> buf{.bias = GrowScratch(scratch.bias, l.dirs * G),
                        .h = GrowScratch(scratch.h, l.dirs * l.b * l.h),
                        .c0 = GrowScratch(scratch.c0, l.dirs * l.b * l.h),
                        .rec = GrowScratch(scratch.rec, l.dirs * l.b * G)};
  a.state.reals.resize(2 * l.dirs);
  for (int64_t d = 0; d < l.dirs; ++d) {
    buf.gates.push_back(KeepArray<T>(a.state.reals[2 * d], rows * G));
    buf.cells.push_back(KeepArray<T>(a.state.reals[2 * d + 1], rows * l.h));
    scratch.r[d].Pack(a.inputs[2].data + d * G * l.h, G, l.h, l.h, l.b);
    buf.r.push_back(&scratch.r[d]);
  }
  for (int64_t d = 0; d < l.dirs; ++d) PrepareDirection(l, d, a, buf);
  ForEachPart(l, a.ctx.threads, [&](const LstmPart& p) { ForwardPart(l, p, a, buf); });
  for (int64_t d = 0; d < l.dirs; ++d) WriteFinalState(l, d, a, buf);
  return absl::OkStatus();
}

template absl::Status LstmForward<float>(const ForwardArgs<float>&);
template absl::Status LstmForward<double>(const ForwardArgs<double>&);

}  // namespace tessera::exec::cpu::lstm
