// CUDA dense ops and the cross-entropy loss: Gemm and MatMul (cuBLAS, the CPU kernels' products
// one for one), Embedding (gather; atomicAdd scatter backward) and SoftmaxCrossEntropy.
#include <climits>

#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

// ----- Gemm and MatMul (cuBLAS) --------------------------------------------------------------
// The same products as the CPU kernels (exec/cpu/kernels_dense.cc), call for call.

// The handle, bound to the context's stream; an error naming the node when there is none.
absl::StatusOr<cublasHandle_t> Blas(const graph::Node& node, const KernelContext& ctx) {
  if (ctx.blas == nullptr) {
    return NodeError(node, "needs a cuBLAS handle in KernelContext::blas (CublasHandle::Create)");
  }
  TS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(ctx.blas, ctx.stream));
  return ctx.blas;
}

absl::Status FitsInt(const graph::Node& node, std::initializer_list<int64_t> values) {
  for (int64_t v : values) {
    if (v > INT_MAX) {
      return NodeError(node, absl::StrCat("a matrix dimension or stride (", v,
                                          ") exceeds cuBLAS's 32-bit int; split the product"));
    }
  }
  return absl::OkStatus();
}

// A row-major operand: its data, row stride (leading dimension) and the distance between the
// matrices of a batch.
struct Operand {
  const float* data = nullptr;
  int64_t ld = 0;
  int64_t stride = 0;
};

// Row-major C[m,n] = alpha op(A) op(B) + beta C (the arguments of the CPU's gemm.h), for
// `batches` matrices `stride_c` apart. cuBLAS is column-major, where a row-major matrix reads
// as its transpose: C^T = op(B)^T op(A)^T, so B goes first, m and n swap, and each operand keeps
// its own transpose flag. Callers handle k == 0 (no call) as the CPU kernels do.
absl::Status RowGemm(const graph::Node& node, cublasHandle_t h, bool trans_a, bool trans_b,
                     int64_t m, int64_t n, int64_t k, float alpha, Operand a, Operand b,
                     float beta, float* c, int64_t ldc, int64_t stride_c = 0,
                     int64_t batches = 1) {
  if (m == 0 || n == 0 || batches == 0) return absl::OkStatus();
  TS_RETURN_IF_ERROR(FitsInt(node, {m, n, k, a.ld, b.ld, ldc, batches}));
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (batches == 1) {
    TS_CUBLAS_RETURN_IF_ERROR(cublasSgemm(h, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                                          static_cast<int>(k), &alpha, b.data,
                                          static_cast<int>(b.ld), a.data, static_cast<int>(a.ld),
                                          &beta, c, static_cast<int>(ldc)));
    return absl::OkStatus();
  }
  TS_CUBLAS_RETURN_IF_ERROR(cublasSgemmStridedBatched(
      h, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
      b.data, static_cast<int>(b.ld), b.stride, a.data, static_cast<int>(a.ld), a.stride, &beta,
      c, static_cast<int>(ldc), stride_c, static_cast<int>(batches)));
  return absl::OkStatus();
}

// y *= value over n elements.
absl::Status Scale(const graph::Node& node, cublasHandle_t h, float* y, int64_t n, float value) {
  if (n == 0) return absl::OkStatus();
  TS_RETURN_IF_ERROR(FitsInt(node, {n}));
  TS_CUBLAS_RETURN_IF_ERROR(cublasSscal(h, static_cast<int>(n), &value, y, 1));
  return absl::OkStatus();
}

struct GemmDims {
  int64_t m, n, k, lda, ldb;
};

GemmDims GetGemmDims(const graph::GemmAttrs& g, const Tensor& a, const Tensor& b) {
  return {.m = g.trans_a ? a.shape[1] : a.shape[0],
          .n = g.trans_b ? b.shape[0] : b.shape[1],
          .k = g.trans_a ? a.shape[0] : a.shape[1],
          .lda = a.shape[1],
          .ldb = b.shape[1]};
}

// Gemm: Y[M,N] = alpha op(A) op(B) + beta C, C broadcast to [M,N] (ignored when beta is 0).
absl::Status GemmForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(cublasHandle_t h, Blas(a.node, a.ctx));
  const auto& attrs = std::get<graph::GemmAttrs>(a.node.attrs);
  const Tensor& ta = a.inputs[0];
  const Tensor& tb = a.inputs[1];
  const GemmDims d = GetGemmDims(attrs, ta, tb);
  float* y = a.outputs[0].data;
  if (d.m == 0 || d.n == 0) return absl::OkStatus();
  const bool has_c = a.inputs.size() > 2 && a.inputs[2].present() && attrs.beta != 0.0;
  const float beta = static_cast<float>(attrs.beta);
  if (has_c) {  // Y = C broadcast; the product then makes it alpha op(A) op(B) + beta Y
    TS_ASSIGN_OR_RETURN(const Dims space, ToDims(a.node, {d.m, d.n}));
    View dense;
    dense.s[0] = d.n;
    dense.s[1] = 1;
    TS_CUDA_RETURN_IF_ERROR(LaunchCopy(a.inputs[2].data, BroadcastView(a.inputs[2].shape, space),
                                       y, dense, space, false, a.ctx.stream));
  }
  if (d.k == 0) {
    if (!has_c) return ZeroFill(a.outputs[0], a.ctx.stream);
    return Scale(a.node, h, y, d.m * d.n, beta);
  }
  return RowGemm(a.node, h, attrs.trans_a, attrs.trans_b, d.m, d.n, d.k,
                 static_cast<float>(attrs.alpha), {ta.data, d.lda}, {tb.data, d.ldb},
                 has_c ? beta : 0.f, y, d.n);
}

absl::Status GemmBackward(const BwdArgs& a) {
  for (const Tensor& g : a.grad_inputs) TS_RETURN_IF_ERROR(ZeroFill(g, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(cublasHandle_t h, Blas(a.node, a.ctx));
  const auto& attrs = std::get<graph::GemmAttrs>(a.node.attrs);
  const Tensor& ta = a.inputs[0];
  const Tensor& tb = a.inputs[1];
  const GemmDims d = GetGemmDims(attrs, ta, tb);
  if (d.m == 0 || d.n == 0) return absl::OkStatus();  // every gradient is 0 (or empty)
  const float alpha = static_cast<float>(attrs.alpha);
  const Tensor& da = a.grad_inputs[0];
  const Tensor& db = a.grad_inputs[1];
  // dA: stored [M,K] gets alpha dY op(B)^T; stored [K,M] (trans_a) gets alpha op(B) dY^T.
  if (da.present() && d.k > 0) {
    if (!attrs.trans_a) {
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, false, !attrs.trans_b, d.m, d.k, d.n, alpha,
                                 {dy, d.n}, {tb.data, d.ldb}, 0.f, da.data, d.k));
    } else {
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, attrs.trans_b, true, d.k, d.m, d.n, alpha,
                                 {tb.data, d.ldb}, {dy, d.n}, 0.f, da.data, d.m));
    }
  }
  // dB: stored [K,N] gets alpha op(A)^T dY; stored [N,K] (trans_b) gets alpha dY^T op(A).
  if (db.present() && d.k > 0) {
    if (!attrs.trans_b) {
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, !attrs.trans_a, false, d.k, d.n, d.m, alpha,
                                 {ta.data, d.lda}, {dy, d.n}, 0.f, db.data, d.n));
    } else {
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, true, attrs.trans_a, d.n, d.k, d.m, alpha,
                                 {dy, d.n}, {ta.data, d.lda}, 0.f, db.data, d.k));
    }
  }
  // dC: beta dY summed over the axes C broadcasts along (C's shape right-aligned to [M,N]).
  if (a.grad_inputs.size() > 2 && a.grad_inputs[2].present()) {
    const Tensor& dc = a.grad_inputs[2];
    TS_ASSIGN_OR_RETURN(const Dims out, ToDims(a.node, {d.m, d.n}));
    Dims in{.rank = 2, .d = {1, 1}};
    for (size_t k = 0; k < dc.shape.size() && k < 2; ++k) {
      in.d[1 - k] = dc.shape[dc.shape.size() - 1 - k];
    }
    TS_CUDA_RETURN_IF_ERROR(LaunchSumToShape(dy, out, dc.data, in, a.ctx.stream));
    TS_RETURN_IF_ERROR(Scale(a.node, h, dc.data, dc.size(), static_cast<float>(attrs.beta)));
  }
  return absl::OkStatus();
}

// MatMul: numpy matmul. A 1-D A is [1,K] and a 1-D B is [K,1] (Y's memory layout is that of
// [batch..., M, N] either way). Batch axes broadcast.
struct MatMulPlan {
  int64_t m, n, k;
  Dims batch;            // broadcast batch shape of Y
  View a_view, b_view;   // per batch axis, in matrices (0: broadcast)
  int64_t batches = 1;
  bool a_full = false;    // A's batch is Y's batch (no broadcast)
  bool b_full = false;    // B's batch is Y's batch
  bool b_single = false;  // B has one matrix, shared by every batch
};

absl::StatusOr<MatMulPlan> PlanMatMul(const graph::Node& node, graph::Shape a, graph::Shape b) {
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  if (a.size() < 2 || b.size() < 2) return NodeError(node, "MatMul operands need rank >= 1");
  MatMulPlan p;
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  const graph::Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  const auto batch = graph::BroadcastShapes(batch_a, batch_b);
  if (!batch.has_value()) {
    return NodeError(node, absl::StrCat("batch shapes ", graph::ShapeString(batch_a), " and ",
                                        graph::ShapeString(batch_b), " do not broadcast"));
  }
  TS_ASSIGN_OR_RETURN(p.batch, ToDims(node, *batch));
  p.a_view = BroadcastView(batch_a, p.batch);
  p.b_view = BroadcastView(batch_b, p.batch);
  p.batches = graph::NumElements(*batch);
  p.a_full = graph::NumElements(batch_a) == p.batches;
  p.b_full = graph::NumElements(batch_b) == p.batches;
  p.b_single = graph::NumElements(batch_b) == 1;
  return p;
}

// Index of the matrix that batch element `linear` reads through `view`.
int64_t MatrixIndex(int64_t linear, const Dims& batch, const View& view) {
  int64_t index = 0;
  for (int d = batch.rank - 1; d >= 0; --d) {
    index += (linear % batch.d[d]) * view.s[d];
    linear /= batch.d[d];
  }
  return index;
}

absl::Status MatMulForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(cublasHandle_t h, Blas(a.node, a.ctx));
  const Tensor& ta = a.inputs[0];
  const Tensor& tb = a.inputs[1];
  TS_ASSIGN_OR_RETURN(const MatMulPlan p, PlanMatMul(a.node, ta.shape, tb.shape));
  float* y = a.outputs[0].data;
  if (a.outputs[0].size() == 0) return absl::OkStatus();
  if (p.k == 0) return ZeroFill(a.outputs[0], a.ctx.stream);
  const int64_t mk = p.m * p.k, kn = p.k * p.n, mn = p.m * p.n;
  if (p.a_full && p.b_single) {  // one product: the batch folds into A's rows
    return RowGemm(a.node, h, false, false, p.batches * p.m, p.n, p.k, 1.f, {ta.data, p.k},
                   {tb.data, p.n}, 0.f, y, p.n);
  }
  if (p.a_full && p.b_full) {  // no broadcast: one strided batched product
    return RowGemm(a.node, h, false, false, p.m, p.n, p.k, 1.f, {ta.data, p.k, mk},
                   {tb.data, p.n, kn}, 0.f, y, p.n, mn, p.batches);
  }
  for (int64_t i = 0; i < p.batches; ++i) {
    const float* ai = ta.data + MatrixIndex(i, p.batch, p.a_view) * mk;
    const float* bi = tb.data + MatrixIndex(i, p.batch, p.b_view) * kn;
    TS_RETURN_IF_ERROR(RowGemm(a.node, h, false, false, p.m, p.n, p.k, 1.f, {ai, p.k},
                               {bi, p.n}, 0.f, y + i * mn, p.n));
  }
  return absl::OkStatus();
}

absl::Status MatMulBackward(const BwdArgs& a) {
  const Tensor& da = a.grad_inputs[0];
  const Tensor& db = a.grad_inputs[1];
  TS_RETURN_IF_ERROR(ZeroFill(da, a.ctx.stream));
  TS_RETURN_IF_ERROR(ZeroFill(db, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(cublasHandle_t h, Blas(a.node, a.ctx));
  const Tensor& ta = a.inputs[0];
  const Tensor& tb = a.inputs[1];
  TS_ASSIGN_OR_RETURN(const MatMulPlan p, PlanMatMul(a.node, ta.shape, tb.shape));
  if (p.k == 0 || a.outputs[0].size() == 0) return absl::OkStatus();  // every gradient is 0
  const int64_t mk = p.m * p.k, kn = p.k * p.n, mn = p.m * p.n;
  if (p.a_full && p.b_single) {
    if (da.present())
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, false, true, p.batches * p.m, p.k, p.n, 1.f,
                                 {dy, p.n}, {tb.data, p.n}, 0.f, da.data, p.k));
    if (db.present())
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, true, false, p.k, p.n, p.batches * p.m, 1.f,
                                 {ta.data, p.k}, {dy, p.n}, 0.f, db.data, p.n));
    return absl::OkStatus();
  }
  if (p.a_full && p.b_full) {  // dA_i = dY_i B_i^T, dB_i = A_i^T dY_i, one batched product each
    if (da.present())
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, false, true, p.m, p.k, p.n, 1.f, {dy, p.n, mn},
                                 {tb.data, p.n, kn}, 0.f, da.data, p.k, mk, p.batches));
    if (db.present())
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, true, false, p.k, p.n, p.m, 1.f, {ta.data, p.k, mk},
                                 {dy, p.n, mn}, 0.f, db.data, p.n, kn, p.batches));
    return absl::OkStatus();
  }
  // Per batch: dA_i += dY_i B_i^T, dB_i += A_i^T dY_i; accumulating sums the broadcast copies.
  // The products run in order on one stream, so the accumulations never race.
  for (int64_t i = 0; i < p.batches; ++i) {
    const int64_t a_off = MatrixIndex(i, p.batch, p.a_view) * mk;
    const int64_t b_off = MatrixIndex(i, p.batch, p.b_view) * kn;
    const float* dyi = dy + i * mn;
    if (da.present())
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, false, true, p.m, p.k, p.n, 1.f, {dyi, p.n},
                                 {tb.data + b_off, p.n}, 1.f, da.data + a_off, p.k));
    if (db.present())
      TS_RETURN_IF_ERROR(RowGemm(a.node, h, true, false, p.k, p.n, p.m, 1.f,
                                 {ta.data + a_off, p.k}, {dyi, p.n}, 1.f, db.data + b_off, p.n));
  }
  return absl::OkStatus();
}

// ----- Embedding and SoftmaxCrossEntropy ------------------------------------------------------

// Embedding(ids, W): Gather of W's rows; negative ids are errors (docs/kernels.md).
absl::Status EmbeddingForward(const FwdArgs& a) {
  const Tensor& w = a.inputs[1];
  memory::DeviceAllocation idx;
  int64_t outer, inner;
  TS_RETURN_IF_ERROR(
      GatherIndices(a.node, w, a.inputs[0], 0, false, a.ctx, &idx, &outer, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchGather(w.data, 1, w.shape[0], inner,
                                       As<const int64_t>(idx),
                                       a.inputs[0].size(), a.outputs[0].data, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

absl::Status EmbeddingBackward(const BwdArgs& a) {
  const Tensor& dw = a.grad_inputs[1];
  if (!dw.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dw, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  const Tensor& w = a.inputs[1];
  memory::DeviceAllocation idx;
  int64_t outer, inner;
  TS_RETURN_IF_ERROR(
      GatherIndices(a.node, w, a.inputs[0], 0, false, a.ctx, &idx, &outer, &inner));
  TS_CUDA_RETURN_IF_ERROR(LaunchGatherBackward(dy, 1, w.shape[0], inner,
                                               As<const int64_t>(idx),
                                               a.inputs[0].size(), dw.data, a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

struct XentGeometry {
  int64_t outer = 1, classes = 1, inner = 1;
};

// Labels validated on the host; ignored positions become -1. Returns the counted positions.
absl::StatusOr<int64_t> XentLabels(const graph::Node& node, const Tensor& logits,
                                   const Tensor& labels, const KernelContext& ctx,
                                   XentGeometry* g, memory::DeviceAllocation* out) {
  if (logits.shape.size() < 2) return NodeError(node, "logits must be [N, C, d...]");
  g->outer = logits.shape[0];
  g->classes = logits.shape[1];
  g->inner = 1;
  for (size_t d = 2; d < logits.shape.size(); ++d) g->inner *= logits.shape[d];
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> l, IntsToHost(labels, ctx.stream));
  const int64_t ignore = std::get<graph::LossAttrs>(node.attrs).ignore_index;
  int64_t counted = 0;
  for (size_t k = 0; k < l.size(); ++k) {
    if (ignore >= 0 && l[k] == ignore) {
      l[k] = -1;
      continue;
    }
    if (l[k] < 0 || l[k] >= g->classes) {
      return NodeError(node, absl::StrCat("label ", l[k], " at position ", k, " is outside [0, ",
                                          g->classes, ")"));
    }
    ++counted;
  }
  TS_ASSIGN_OR_RETURN(*out, UploadInts(node, ctx, l));
  return counted;
}

// Keeps the probabilities in state.buffers[0].
absl::Status XentForward(const FwdArgs& a) {
  XentGeometry g;
  memory::DeviceAllocation labels;
  TS_ASSIGN_OR_RETURN(const int64_t counted,
                      XentLabels(a.node, a.inputs[0], a.inputs[1], a.ctx, &g, &labels));
  const int64_t positions = g.outer * g.inner;
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation probs,
                      Scratch<float>(a.node, a.ctx, a.inputs[0].size()));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation losses, Scratch<float>(a.node, a.ctx, positions));
  const graph::Reduction reduction = std::get<graph::LossAttrs>(a.node.attrs).reduction;
  float* per_position =
      reduction == graph::Reduction::kNone ? a.outputs[0].data : As<float>(losses);
  TS_CUDA_RETURN_IF_ERROR(LaunchSoftmaxXent(a.inputs[0].data, As<const int64_t>(labels), g.outer,
                                            g.classes, g.inner, As<float>(probs), per_position,
                                            a.ctx.stream));
  if (reduction != graph::Reduction::kNone) {
    const float scale = reduction == graph::Reduction::kSum ? 1.f
                        : counted == 0 ? 0.f
                                       : 1.f / static_cast<float>(counted);
    TS_CUDA_RETURN_IF_ERROR(
        LaunchSumAll(As<float>(losses), positions, scale, a.outputs[0].data, a.ctx.stream));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  a.state.buffers.push_back(std::move(probs));
  return absl::OkStatus();
}

absl::Status XentBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return ZeroFill(dx, a.ctx.stream);
  if (a.state.buffers.empty()) return NodeError(a.node, "backward without a forward");
  XentGeometry g;
  memory::DeviceAllocation labels;
  TS_ASSIGN_OR_RETURN(const int64_t counted,
                      XentLabels(a.node, a.inputs[0], a.inputs[1], a.ctx, &g, &labels));
  const graph::Reduction reduction = std::get<graph::LossAttrs>(a.node.attrs).reduction;
  const float scale = reduction != graph::Reduction::kMean ? 1.f
                      : counted == 0                       ? 0.f
                                                           : 1.f / static_cast<float>(counted);
  TS_CUDA_RETURN_IF_ERROR(LaunchSoftmaxXentBackward(
      As<const float>(a.state.buffers[0]), As<const int64_t>(labels), g.outer,
      g.classes, g.inner, dy, reduction == graph::Reduction::kNone, scale, dx.data,
      a.ctx.stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaDense(OpTable& table) {
  Slot(table, OpKind::kGemm) = {&GemmForward, &GemmBackward};
  Slot(table, OpKind::kMatMul) = {&MatMulForward, &MatMulBackward};
  Slot(table, OpKind::kEmbedding) = {&EmbeddingForward, &EmbeddingBackward};
  Slot(table, OpKind::kSoftmaxCrossEntropy) = {&XentForward, &XentBackward};
}

}  // namespace tessera::exec::cuda
