// CUDA LSTM: the CPU kernel's semantics (exec/cpu/kernels_recurrent.cc, docs/kernels.md) on the
// device. ONNX LSTM(X, W, R, B?, sequence_lens?, initial_h?, initial_c?) -> (Y, Y_h, Y_c), gate
// order i, o, f, c, layouts 0 and 1, forward, reverse and bidirectional.
//
// Forward, per direction d:
//   1. xw = X W_d^T (one cuBLAS product over all T*B rows of X), then xw += Wb + Rb.
//   2. h, c = initial_h, initial_c (direction d, or 0).
//   3. per step k: pre = h R_d^T (cuBLAS), then one fused kernel per (row, unit): the gates from
//      pre + xw at the row's time, c = f c + i g, h = o tanh(c), Y[time] = h, for the rows still
//      inside their sequence (sequence_lens); the activated gates and the cells are kept.
//   4. Y_h, Y_c = h, c (the state after each row's last step).
// Backward, per direction, the steps in reverse order: the cell-backward kernel (dh += dY,
// dG from dh and dc), dR += dG^T h_prev and dh = dG R_d (cuBLAS); after the loop dX += dG_all W_d,
// dW_d = dG_all^T X and dWb = dRb = column sums of dG_all.
// OpState: buffers[2d] the activated gates [T, B, 4H] and buffers[2d + 1] the cells [T, B, H] of
// direction d, indexed by step (as on the CPU, whose float64 copies they replace); the hidden
// states are read back from Y, so backward reads X (only for dW), W, R, Y, sequence_lens, h0, c0
// and never B, Y_h or Y_c (costmodel/estimate_recurrent.cc's keep list).
#include <algorithm>
#include <climits>

#include "tessera/exec/cuda/ops_impl.h"
#include "tessera/exec/cuda/recurrent_launch.h"
#include "tessera/graph/shape.h"

namespace tessera::exec::cuda {
namespace {

const Tensor* Optional(absl::Span<const Tensor> v, size_t i) {
  return i < v.size() && v[i].present() ? &v[i] : nullptr;
}

// Row-major C[m, n] = alpha op(A) op(B) + beta C with cuBLAS (column-major): computes
// C^T = op(B)^T op(A)^T, so B goes first. ldc must be n.
absl::Status RowGemm(cublasHandle_t blas, bool trans_a, bool trans_b, int64_t m, int64_t n,
                     int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float beta, float* c, cudaStream_t stream) {
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {  // op(A) op(B) is all zeros
    if (beta == 0.f) TS_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(c, 0, sizeof(float) * m * n, stream));
    return absl::OkStatus();
  }
  for (int64_t v : {m, n, k, lda, ldb}) {
    if (v > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("LSTM matrix dimension ", v, " exceeds cuBLAS's 32-bit sizes"));
    }
  }
  const float alpha = 1.f;
  TS_CUBLAS_RETURN_IF_ERROR(cublasSgemm(
      blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b,
      static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c, static_cast<int>(n)));
  return absl::OkStatus();
}

// Waits for the stream when it goes out of scope: declared after the scratch buffers of a
// function, it keeps them alive until the kernels that use them have run, on every return path.
class SyncOnExit {
 public:
  explicit SyncOnExit(cudaStream_t stream) : stream_(stream) {}
  ~SyncOnExit() { cudaStreamSynchronize(stream_); }
  SyncOnExit(const SyncOnExit&) = delete;
  SyncOnExit& operator=(const SyncOnExit&) = delete;

 private:
  cudaStream_t stream_;
};

struct LstmPlan {
  LstmGeometry geo;
  int64_t in = 0;     // input size I
  memory::DeviceAllocation lens;  // int64 [B]: sequence_lens, or T for every row
};

absl::Status CheckValues(const graph::Node& node, const Tensor* t, absl::string_view what,
                         int64_t want) {
  if (t == nullptr || t->size() == want) return absl::OkStatus();
  return NodeError(node, absl::StrCat(what, " has shape ", graph::ShapeString(t->shape), " (",
                                      t->size(), " values) but X, hidden_size and direction ask "
                                      "for ", want, " values; rerun shape inference"));
}

// sequence_lens (or T for every row) as int64 on the device, after checking each lies in [0, T]
// (the CPU kernel's message).
absl::StatusOr<memory::DeviceAllocation> UploadLengths(const graph::Node& node,
                                                       const Tensor* seq_lens,
                                                       const LstmGeometry& g,
                                                       const KernelContext& ctx) {
  std::vector<int64_t> lens(g.b, g.t);
  if (seq_lens != nullptr) {
    TS_ASSIGN_OR_RETURN(lens, IntsToHost(*seq_lens, ctx.stream));
    if (static_cast<int64_t>(lens.size()) != g.b) {
      return NodeError(node, absl::StrCat("sequence_lens has ", lens.size(),
                                          " values; it needs one per batch row (", g.b, ")"));
    }
  }
  for (int64_t r = 0; r < g.b; ++r) {
    if (lens[r] < 0 || lens[r] > g.t) {
      return NodeError(node, absl::StrCat("sequence_lens[", r, "] is ", lens[r],
                                          "; it must lie in [0, ", g.t, "] (the time axis of X)"));
    }
  }
  return UploadInts(node, ctx, lens);
}

// Checks every tensor's size against X and the attributes (so a mismatch is an error, never a
// device fault), and uploads the sequence lengths after checking them (as the CPU kernel).
absl::StatusOr<LstmPlan> PlanLstm(const graph::Node& node, absl::Span<const Tensor> in,
                                  absl::Span<const Tensor> out, const KernelContext& ctx) {
  if (in.size() < 3 || out.size() != 3) {
    return NodeError(node, "LSTM needs inputs X, W, R (then B?, sequence_lens?, initial_h?, "
                           "initial_c?) and outputs Y, Y_h, Y_c");
  }
  if (!std::holds_alternative<graph::LstmAttrs>(node.attrs)) {
    return NodeError(node, "the node's attributes are not LstmAttrs");
  }
  const auto& attrs = std::get<graph::LstmAttrs>(node.attrs);
  for (size_t i = 0; i < 3; ++i) {
    if (!in[i].present()) return NodeError(node, absl::StrCat("input ", i, " (X, W, R) is absent"));
  }
  if (in[0].shape.size() != 3 || attrs.hidden_size <= 0 ||
      (attrs.layout != 0 && attrs.layout != 1)) {
    return NodeError(node, absl::StrCat("X must have rank 3 (it has shape ",
                                        graph::ShapeString(in[0].shape), "), hidden_size > 0 (",
                                        attrs.hidden_size, ") and layout 0 or 1 (", attrs.layout,
                                        ")"));
  }
  if (!out[0].present()) return NodeError(node, "output Y needs a buffer (backward reads it)");
  LstmPlan p;
  const graph::Shape& x = in[0].shape;
  p.geo = LstmGeometry{.t = attrs.layout == 0 ? x[0] : x[1],
                       .b = attrs.layout == 0 ? x[1] : x[0],
                       .h = attrs.hidden_size,
                       .dirs = attrs.direction == graph::LstmDirection::kBidirectional ? 2 : 1,
                       .layout = attrs.layout,
                       .reverse_first = attrs.direction == graph::LstmDirection::kReverse};
  p.in = x[2];
  const LstmGeometry& g = p.geo;
  const int64_t gates = g.dirs * 4 * g.h, state = g.dirs * g.b * g.h;
  TS_RETURN_IF_ERROR(CheckValues(node, &in[1], "W", gates * p.in));
  TS_RETURN_IF_ERROR(CheckValues(node, &in[2], "R", gates * g.h));
  TS_RETURN_IF_ERROR(CheckValues(node, Optional(in, 3), "B", 2 * gates));
  TS_RETURN_IF_ERROR(CheckValues(node, Optional(in, 5), "initial_h", state));
  TS_RETURN_IF_ERROR(CheckValues(node, Optional(in, 6), "initial_c", state));
  TS_RETURN_IF_ERROR(CheckValues(node, &out[0], "Y", g.t * state));
  TS_RETURN_IF_ERROR(CheckValues(node, Optional(out, 1), "Y_h", state));
  TS_RETURN_IF_ERROR(CheckValues(node, Optional(out, 2), "Y_c", state));
  TS_ASSIGN_OR_RETURN(p.lens, UploadLengths(node, Optional(in, 4), g, ctx));
  return p;
}

const int64_t* Lens(const LstmPlan& p) { return As<const int64_t>(p.lens); }

// Direction d of the forward pass: writes Y (zeroed by the caller), Y_h, Y_c and keeps the
// direction's gates and cells in state.buffers[2d], [2d + 1].
absl::Status ForwardDirection(const FwdArgs& a, const LstmPlan& p, int64_t d) {
  const LstmGeometry& g = p.geo;
  const int64_t H = g.h, G = 4 * g.h, rows = g.t * g.b;
  const cudaStream_t s = a.ctx.stream;
  const float* w = a.inputs[1].data + d * G * p.in;
  const float* r = a.inputs[2].data + d * G * H;
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation gates_dev, Scratch<float>(a.node, a.ctx, rows * G));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation cells_dev, Scratch<float>(a.node, a.ctx, rows * H));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation xw_dev, Scratch<float>(a.node, a.ctx, rows * G));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation pre_dev, Scratch<float>(a.node, a.ctx, g.b * G));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation h_dev, Scratch<float>(a.node, a.ctx, g.b * H));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation c_dev, Scratch<float>(a.node, a.ctx, g.b * H));
  float *gates = As<float>(gates_dev), *cells = As<float>(cells_dev), *xw = As<float>(xw_dev),
        *pre = As<float>(pre_dev), *h = As<float>(h_dev), *c = As<float>(c_dev);
  SyncOnExit sync(s);
  // Step 1: X W^T + Wb + Rb for every step at once.
  TS_RETURN_IF_ERROR(RowGemm(a.ctx.blas, false, true, rows, G, p.in, a.inputs[0].data, p.in, w,
                             p.in, 0.f, xw, s));
  if (const Tensor* bias = Optional(a.inputs, 3)) {
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmAddBias(xw, bias->data + d * 2 * G, rows, G, s));
  }
  // Step 2: the initial state.
  const Tensor* h0 = Optional(a.inputs, 5);
  const Tensor* c0 = Optional(a.inputs, 6);
  TS_CUDA_RETURN_IF_ERROR(LaunchLstmLoadState(h0 ? h0->data : nullptr, g, d, h, s));
  TS_CUDA_RETURN_IF_ERROR(LaunchLstmLoadState(c0 ? c0->data : nullptr, g, d, c, s));
  // Step 3: the time loop.
  for (int64_t k = 0; k < g.t; ++k) {
    TS_RETURN_IF_ERROR(RowGemm(a.ctx.blas, false, true, g.b, G, H, h, H, r, H, 0.f, pre, s));
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmCellForward(g, d, k, Lens(p), xw, pre, h, c,
                                                  a.outputs[0].data, gates + k * g.b * G,
                                                  cells + k * g.b * H, s));
  }
  // Step 4: the final state.
  if (const Tensor* yh = Optional(a.outputs, 1)) {
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmStoreState(h, g, d, yh->data, s));
  }
  if (const Tensor* yc = Optional(a.outputs, 2)) {
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmStoreState(c, g, d, yc->data, s));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  a.state.buffers.push_back(std::move(gates_dev));
  a.state.buffers.push_back(std::move(cells_dev));
  return absl::OkStatus();
}

absl::Status LstmForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(LstmPlan p, PlanLstm(a.node, a.inputs, a.outputs, a.ctx));
  if (a.ctx.blas == nullptr) return NodeError(a.node, "KernelContext::blas (cuBLAS) is not set");
  TS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(a.ctx.blas, a.ctx.stream));
  // Y stays 0 past each row's sequence.
  TS_RETURN_IF_ERROR(ZeroFill(a.outputs[0], a.ctx.stream));
  for (int64_t d = 0; d < p.geo.dirs; ++d) TS_RETURN_IF_ERROR(ForwardDirection(a, p, d));
  return absl::OkStatus();
}

// Scratch of the backward pass, shared by the directions.
struct LstmScratch {
  memory::DeviceAllocation dgate_all, dg, dh, dc, dh_new, h_prev, h0, c0;
};

absl::StatusOr<LstmScratch> AllocScratch(const BwdArgs& a, const LstmGeometry& g) {
  const int64_t bh = g.b * g.h;
  LstmScratch w;
  TS_ASSIGN_OR_RETURN(w.dgate_all, Scratch<float>(a.node, a.ctx, g.t * g.b * 4 * g.h));
  TS_ASSIGN_OR_RETURN(w.dg, Scratch<float>(a.node, a.ctx, g.b * 4 * g.h));
  for (memory::DeviceAllocation* b : {&w.dh, &w.dc, &w.dh_new, &w.h_prev, &w.h0, &w.c0}) {
    TS_ASSIGN_OR_RETURN(*b, Scratch<float>(a.node, a.ctx, bh));
  }
  return w;
}

// Backward through time of direction d: fills w.dgate_all, accumulates dR, writes dh0, dc0.
absl::Status BackwardThroughTime(const BwdArgs& a, const LstmPlan& p, int64_t d,
                                 LstmScratch& w) {
  const LstmGeometry& g = p.geo;
  const int64_t H = g.h, G = 4 * g.h, bh = g.b * g.h;
  const cudaStream_t s = a.ctx.stream;
  const float* r = a.inputs[2].data + d * G * H;
  const float* gates = As<const float>(a.state.buffers[2 * d]);
  const float* cells = As<const float>(a.state.buffers[2 * d + 1]);
  const Tensor* h0 = Optional(a.inputs, 5);
  const Tensor* c0 = Optional(a.inputs, 6);
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(As<float>(w.dgate_all), 0, sizeof(float) * g.t * g.b * G, s));
  TS_CUDA_RETURN_IF_ERROR(LaunchLstmLoadState(h0 ? h0->data : nullptr, g, d, As<float>(w.h0), s));
  TS_CUDA_RETURN_IF_ERROR(LaunchLstmLoadState(c0 ? c0->data : nullptr, g, d, As<float>(w.c0), s));
  TS_CUDA_RETURN_IF_ERROR(LaunchLstmLoadState(GradOut(a, 1), g, d, As<float>(w.dh), s));
  TS_CUDA_RETURN_IF_ERROR(LaunchLstmLoadState(GradOut(a, 2), g, d, As<float>(w.dc), s));
  const Tensor* dr_t = Optional(a.grad_inputs, 2);
  float* dr = dr_t ? dr_t->data + d * G * H : nullptr;
  for (int64_t k = g.t - 1; k >= 0; --k) {
    const float* cells_prev = k > 0 ? cells + (k - 1) * bh : As<float>(w.c0);
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmCellBackward(
        g, d, k, Lens(p), gates + k * g.b * G, cells + k * bh, cells_prev, GradOut(a, 0),
        As<float>(w.dh), As<float>(w.dc), As<float>(w.dg), As<float>(w.dgate_all), s));
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmPreviousHidden(g, d, k, Lens(p), a.outputs[0].data,
                                                     As<float>(w.h0), As<float>(w.h_prev), s));
    if (dr != nullptr) {  // dR += dG^T h_prev
      TS_RETURN_IF_ERROR(RowGemm(a.ctx.blas, true, false, G, H, g.b, As<float>(w.dg), G,
                                 As<float>(w.h_prev), H, 1.f, dr, s));
    }
    // dh = dG R for the rows inside their sequence (the others carry theirs unchanged).
    TS_RETURN_IF_ERROR(RowGemm(a.ctx.blas, false, false, g.b, H, G, As<float>(w.dg), G, r, H, 0.f,
                               As<float>(w.dh_new), s));
    TS_CUDA_RETURN_IF_ERROR(
        LaunchLstmActiveRowsCopy(g, d, k, Lens(p), As<float>(w.dh_new), As<float>(w.dh), s));
  }
  if (const Tensor* dh0 = Optional(a.grad_inputs, 5)) {
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmStoreState(As<float>(w.dh), g, d, dh0->data, s));
  }
  if (const Tensor* dc0 = Optional(a.grad_inputs, 6)) {
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmStoreState(As<float>(w.dc), g, d, dc0->data, s));
  }
  return absl::OkStatus();
}

// The products over all steps of direction d: dX += dG_all W_d, dW_d = dG_all^T X, dB_d.
absl::Status WeightGrads(const BwdArgs& a, const LstmPlan& p, int64_t d, const LstmScratch& w) {
  const LstmGeometry& g = p.geo;
  const int64_t G = 4 * g.h, rows = g.t * g.b;
  const cudaStream_t s = a.ctx.stream;
  const float* dga = As<float>(w.dgate_all);
  if (const Tensor* dx = Optional(a.grad_inputs, 0)) {
    TS_RETURN_IF_ERROR(RowGemm(a.ctx.blas, false, false, rows, p.in, G, dga, G,
                               a.inputs[1].data + d * G * p.in, p.in, 1.f, dx->data, s));
  }
  if (const Tensor* dw = Optional(a.grad_inputs, 1)) {
    TS_RETURN_IF_ERROR(RowGemm(a.ctx.blas, true, false, G, p.in, rows, dga, G, a.inputs[0].data,
                               p.in, 0.f, dw->data + d * G * p.in, s));
  }
  if (const Tensor* db = Optional(a.grad_inputs, 3)) {
    TS_CUDA_RETURN_IF_ERROR(LaunchLstmBiasGrad(dga, rows, G, db->data + d * 2 * G, s));
  }
  return absl::OkStatus();
}

absl::Status LstmBackward(const BwdArgs& a) {
  for (const Tensor& g : a.grad_inputs) {
    if (graph::IsFloating(g.dtype)) TS_RETURN_IF_ERROR(ZeroFill(g, a.ctx.stream));
  }
  TS_ASSIGN_OR_RETURN(LstmPlan p, PlanLstm(a.node, a.inputs, a.outputs, a.ctx));
  if (a.state.buffers.size() != static_cast<size_t>(2 * p.geo.dirs)) {
    return NodeError(a.node, "backward without a forward (no kept gates and cells)");
  }
  if (a.ctx.blas == nullptr) return NodeError(a.node, "KernelContext::blas (cuBLAS) is not set");
  TS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(a.ctx.blas, a.ctx.stream));
  TS_ASSIGN_OR_RETURN(LstmScratch w, AllocScratch(a, p.geo));
  SyncOnExit sync(a.ctx.stream);
  for (int64_t d = 0; d < p.geo.dirs; ++d) {
    TS_RETURN_IF_ERROR(BackwardThroughTime(a, p, d, w));
    TS_RETURN_IF_ERROR(WeightGrads(a, p, d, w));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaLstm(OpTable& table) {
  Slot(table, graph::OpKind::kLstm) = {&LstmForward, &LstmBackward};
}

}  // namespace tessera::exec::cuda
