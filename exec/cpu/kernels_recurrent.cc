// CPU kernels of the Recurrent family (see kernels.h for the conventions): ONNX LSTM.
//
// LSTM(X, W[dirs,4H,I], R[dirs,4H,H], B?[dirs,8H], seq_lens?[B], h0?, c0?) -> (Y, Y_h, Y_c),
// gate order i, o, f, c; activations sigmoid, tanh, tanh; no peepholes, no clipping.
// Per direction and step, for the rows of the batch still inside their sequence:
//   G = X_t W^T + h R^T + Wb + Rb;  i, o, f = sigmoid(G_i, G_o, G_f);  g = tanh(G_c)
//   c = f * c + i * g;  h = o * tanh(c);  Y[t] = h
// The forward direction visits t = 0 .. len-1, the reverse one t = len-1 .. 0, with len the
// row's seq_lens entry (T when absent). Y is 0 at t >= len; Y_h, Y_c are the state after the
// row's last step (h0, c0 for len = 0). X W^T for all steps is one product before the loop.
//
// Backward through time, per direction, visits the steps in reverse order:
//   dh += dY[t];  dct = dc + dh * o * (1 - tanh(c)^2)
//   dG = [dct*g * i(1-i), dh*tanh(c) * o(1-o), dct*c_prev * f(1-f), dct*i * (1-g^2)]
//   dh = dG R;  dc = dct * f;  dR += dG^T h_prev
// and after the loop dX += dG_all W, dW = dG_all^T X, dWb = dRb = column sums of dG_all.
// state.reals[2d] and [2d + 1] keep the activated gates [T,B,4H] and the cell states [T,B,H] of
// direction d, indexed by step (not by time); the hidden states are read back from Y.
#include <Eigen/Dense>
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

template <typename T>
void Fill(const Tensor<T>& t, T value) {
  if (t.present()) std::fill(t.data, t.data + t.size(), value);
}

struct Lstm {
  int64_t t, b, i, h, dirs, layout;
  graph::LstmDirection direction;
  std::vector<int64_t> lens;  // per batch row

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
  return l;
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

template <typename T>
using Array = Eigen::Array<T, 1, Eigen::Dynamic>;
template <typename T>
using ConstArray = Eigen::Map<const Array<T>>;

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One direction of the forward pass; writes Y, Y_h, Y_c and the direction's state.
template <typename T>
void ForwardDirection(const Lstm& l, int64_t d, const ForwardArgs<T>& a) {
  const int64_t H = l.h, G = 4 * l.h, rows = l.t * l.b;
  const T* w = a.inputs[1].data + d * G * l.i;
  const T* r = a.inputs[2].data + d * G * H;
  // xw[XRow(t, b)] = X_t W^T + Wb + Rb for every step at once.
  std::vector<T> xw(rows * G), pre(l.b * G), h(l.b * H), c(l.b * H);
  Gemm<T>(false, true, rows, G, l.i, T(1), a.inputs[0].data, l.i, w, l.i, T(0), xw.data(), G);
  if (const Tensor<T>* bias = Optional(a.inputs, 3)) {
    Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>> wb(bias->data + d * 2 * G, G);
    Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>> rb(bias->data + d * 2 * G + G, G);
    Eigen::Map<RowMatrix<T>>(xw.data(), rows, G).array().rowwise() += wb + rb;
  }
  GatherState(l, Optional(a.inputs, 5), d, h.data());
  GatherState(l, Optional(a.inputs, 6), d, c.data());
  std::vector<double>& gates = a.state.reals[2 * d];
  std::vector<double>& cells = a.state.reals[2 * d + 1];
  Eigen::Map<RowMatrix<T>> P(pre.data(), l.b, G);
  for (int64_t k = 0; k < l.t; ++k) {
    Gemm<T>(false, true, l.b, G, H, T(1), h.data(), H, r, H, T(0), pre.data(), G);
    for (int64_t row = 0; row < l.b; ++row) {
      const int64_t time = l.Time(d, k, row);
      if (time >= 0)
        P.row(row) += Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(
            xw.data() + l.XRow(time, row) * G, G);
    }
    P.leftCols(3 * H) = P.leftCols(3 * H).array().logistic().matrix();
    P.rightCols(H) = P.rightCols(H).array().tanh().matrix();
    for (int64_t row = 0; row < l.b; ++row) {
      const int64_t time = l.Time(d, k, row);
      T* hr = h.data() + row * H;
      T* cr = c.data() + row * H;
      const T* p = pre.data() + row * G;
      if (time >= 0) {
        Eigen::Map<Array<T>> cv(cr, H), hv(hr, H);
        cv = ConstArray<T>(p + 2 * H, H) * cv + ConstArray<T>(p, H) * ConstArray<T>(p + 3 * H, H);
        hv = ConstArray<T>(p + H, H) * cv.tanh();
        std::copy(hr, hr + H, a.outputs[0].data + l.YOffset(time, d, row));
      }
      const int64_t s = (k * l.b + row);
      std::copy(p, p + G, gates.begin() + s * G);
      std::copy(cr, cr + H, cells.begin() + s * H);
    }
  }
  for (int64_t row = 0; row < l.b; ++row) {
    std::copy(h.data() + row * H, h.data() + (row + 1) * H,
              a.outputs[1].data + l.StateOffset(d, row));
    std::copy(c.data() + row * H, c.data() + (row + 1) * H,
              a.outputs[2].data + l.StateOffset(d, row));
  }
}

template <typename T>
absl::Status LstmForward(const ForwardArgs<T>& a) {
  absl::StatusOr<Lstm> l = PlanLstm(a.node, a.inputs);
  if (!l.ok()) return l.status();
  Fill(a.outputs[0], T(0));  // Y stays 0 past each row's sequence
  a.state.reals.resize(2 * l->dirs);
  for (int64_t d = 0; d < l->dirs; ++d) {
    a.state.reals[2 * d].resize(l->t * l->b * 4 * l->h);
    a.state.reals[2 * d + 1].resize(l->t * l->b * l->h);
    ForwardDirection(*l, d, a);
  }
  return absl::OkStatus();
}

// dG of one row at one step from the carried dh and dc (dc becomes dc_prev); `scratch` holds 2H
// doubles.
template <typename T>
void CellBackward(int64_t H, const double* gate, const double* c, const double* c_prev, T* dh,
                  T* dc, T* dg, double* scratch) {
  using Doubles = ConstArray<double>;
  const Doubles i(gate, H), o(gate + H, H), f(gate + 2 * H, H), g(gate + 3 * H, H);
  Eigen::Map<Array<double>> tc(scratch, H), dct(scratch + H, H);
  Eigen::Map<Array<T>> dcv(dc, H);
  const auto dhv = Eigen::Map<Array<T>>(dh, H).template cast<double>();
  tc = Doubles(c, H).template cast<T>().tanh().template cast<double>();  // as forward computed it
  dct = dcv.template cast<double>() + dhv * o * (1 - tc.square());
  Eigen::Map<Array<T>>(dg, H) = (dct * g * i * (1 - i)).template cast<T>();
  Eigen::Map<Array<T>>(dg + H, H) = (dhv * tc * o * (1 - o)).template cast<T>();
  Eigen::Map<Array<T>>(dg + 2 * H, H) = (dct * Doubles(c_prev, H) * f * (1 - f)).template cast<T>();
  Eigen::Map<Array<T>>(dg + 3 * H, H) = (dct * i * (1 - g.square())).template cast<T>();
  dcv = (dct * f).template cast<T>();
}

// The hidden state before step k of direction d, [B, H]: Y at the previous step's time, or h0
// at step 0 (0 for rows whose sequence is over: their dG is 0).
template <typename T>
void PreviousHidden(const Lstm& l, int64_t d, int64_t k, const T* y, const T* h0, T* h_prev) {
  for (int64_t row = 0; row < l.b; ++row) {
    T* out = h_prev + row * l.h;
    if (l.Time(d, k, row) < 0) {
      std::fill(out, out + l.h, T(0));
    } else if (k == 0) {
      std::copy(h0 + row * l.h, h0 + (row + 1) * l.h, out);
    } else {
      const T* src = y + l.YOffset(l.Time(d, k - 1, row), d, row);
      std::copy(src, src + l.h, out);
    }
  }
}

// Backward of one direction: accumulates dX, writes dW, dR, dB, dh0, dc0 of direction d.
template <typename T>
void BackwardDirection(const Lstm& l, int64_t d, const BackwardArgs<T>& a, T* dgate_all) {
  const int64_t H = l.h, G = 4 * l.h;
  const T* r = a.inputs[2].data + d * G * H;
  const T* dy = a.grad_outputs[0].data;
  const std::vector<double>& gates = a.state.reals.at(2 * d);
  const std::vector<double>& cells = a.state.reals.at(2 * d + 1);
  std::vector<T> dh(l.b * H), dc(l.b * H), dg(l.b * G), dh_new(l.b * H), h_prev(l.b * H),
      h0(l.b * H), c0_t(l.b * H);
  GatherState(l, Optional(a.inputs, 5), d, h0.data());
  GatherState(l, Optional(a.grad_outputs, 1), d, dh.data());
  GatherState(l, Optional(a.grad_outputs, 2), d, dc.data());
  GatherState(l, Optional(a.inputs, 6), d, c0_t.data());
  const std::vector<double> c0(c0_t.begin(), c0_t.end());
  std::vector<double> scratch(2 * H);
  T* dr = a.grad_inputs[2].present() ? a.grad_inputs[2].data + d * G * H : nullptr;
  for (int64_t k = l.t - 1; k >= 0; --k) {
    std::fill(dg.begin(), dg.end(), T(0));
    for (int64_t row = 0; row < l.b; ++row) {
      const int64_t time = l.Time(d, k, row);
      if (time < 0) continue;
      T* dhr = dh.data() + row * H;
      if (dy != nullptr)
        for (int64_t j = 0; j < H; ++j) dhr[j] += dy[l.YOffset(time, d, row) + j];
      const int64_t s = k * l.b + row;
      const double* cp = k > 0 ? cells.data() + (s - l.b) * H : c0.data() + row * H;
      CellBackward<T>(H, gates.data() + s * G, cells.data() + s * H, cp, dhr, dc.data() + row * H,
                      dg.data() + row * G, scratch.data());
      std::copy(dg.data() + row * G, dg.data() + (row + 1) * G, dgate_all + l.XRow(time, row) * G);
    }
    PreviousHidden(l, d, k, a.outputs[0].data, h0.data(), h_prev.data());
    if (dr != nullptr)
      Gemm<T>(true, false, G, H, l.b, T(1), dg.data(), G, h_prev.data(), H, T(1), dr, H);
    Gemm<T>(false, false, l.b, H, G, T(1), dg.data(), G, r, H, T(0), dh_new.data(), H);
    for (int64_t row = 0; row < l.b; ++row)
      if (l.Time(d, k, row) >= 0)
        std::copy(dh_new.data() + row * H, dh_new.data() + (row + 1) * H, dh.data() + row * H);
  }
  for (int64_t row = 0; row < l.b; ++row) {
    const int64_t off = l.StateOffset(d, row);
    if (const Tensor<T>* dh0 = Optional(a.grad_inputs, 5))
      std::copy(dh.data() + row * H, dh.data() + (row + 1) * H, dh0->data + off);
    if (const Tensor<T>* dc0 = Optional(a.grad_inputs, 6))
      std::copy(dc.data() + row * H, dc.data() + (row + 1) * H, dc0->data + off);
  }
}

template <typename T>
absl::Status LstmBackward(const BackwardArgs<T>& a) {
  for (const Tensor<T>& g : a.grad_inputs) Fill(g, T(0));
  absl::StatusOr<Lstm> l = PlanLstm(a.node, a.inputs);
  if (!l.ok()) return l.status();
  const int64_t G = 4 * l->h, rows = l->t * l->b;
  std::vector<T> dgate_all(rows * G);
  const T* x = a.inputs[0].data;
  for (int64_t d = 0; d < l->dirs; ++d) {
    std::fill(dgate_all.begin(), dgate_all.end(), T(0));
    BackwardDirection(*l, d, a, dgate_all.data());
    if (a.grad_inputs[0].present())
      Gemm<T>(false, false, rows, l->i, G, T(1), dgate_all.data(), G,
              a.inputs[1].data + d * G * l->i, l->i, T(1), a.grad_inputs[0].data, l->i);
    if (a.grad_inputs[1].present())
      Gemm<T>(true, false, G, l->i, rows, T(1), dgate_all.data(), G, x, l->i, T(0),
              a.grad_inputs[1].data + d * G * l->i, l->i);
    if (const Tensor<T>* db = Optional(a.grad_inputs, 3)) {
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>> wb(db->data + d * 2 * G, G);
      wb = Eigen::Map<RowMatrix<T>>(dgate_all.data(), rows, G).colwise().sum();
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(db->data + d * 2 * G + G, G) = wb;
    }
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterRecurrentKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kLstm) = {&LstmForward<T>, &LstmBackward<T>};
}

template void RegisterRecurrentKernels<float>(KernelTable<float>&);
template void RegisterRecurrentKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
