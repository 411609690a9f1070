// CPU kernels of the Dense family (see kernels.h for the conventions): Gemm, MatMul, Embedding.
// Every matrix product goes through OpenBLAS (gemm.h); operand gradients are one product each,
// and sums over broadcast axes are folded into the product by accumulating (beta = 1).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

std::string Label(const graph::Node& node) {
  return absl::StrCat("node '", node.name, "' (", graph::OpName(node.kind), ")");
}

template <typename T>
void Fill(const Tensor<T>& t, T value) {
  if (t.present()) std::fill(t.data, t.data + t.size(), value);
}

// Element strides of `shape`, right-aligned against `out` (numpy broadcasting), with 0 on the axes
// `shape` broadcasts along; one entry per axis of `out`.
std::vector<int64_t> BroadcastStrides(const graph::Shape& shape, const graph::Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t axis_in = shape.size() - 1 - k;
    const size_t axis_out = out.size() - 1 - k;
    strides[axis_out] = shape[axis_in] == 1 ? 0 : stride;
    stride *= shape[axis_in];
  }
  return strides;
}

// Offset of the element with row-major linear index `linear` of `out` in a tensor broadcast with
// `strides` (from BroadcastStrides).
int64_t BroadcastOffset(int64_t linear, const graph::Shape& out,
                        const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t k = out.size(); k-- > 0;) {
    offset += (linear % out[k]) * strides[k];
    linear /= out[k];
  }
  return offset;
}

// ---------------------------------------------------------------------------------------------
// Gemm: Y[M,N] = alpha * op(A) op(B) + beta * C, C broadcast to [M,N].

struct GemmDims {
  int64_t m, n, k, lda, ldb;
};

template <typename T>
GemmDims GetGemmDims(const graph::GemmAttrs& g, const Tensor<T>& a, const Tensor<T>& b) {
  return {.m = g.trans_a ? a.shape[1] : a.shape[0],
          .n = g.trans_b ? b.shape[0] : b.shape[1],
          .k = g.trans_a ? a.shape[0] : a.shape[1],
          .lda = a.shape[1],
          .ldb = b.shape[1]};
}

template <typename T>
absl::Status GemmForward(const ForwardArgs<T>& a) {
  const auto& attrs = std::get<graph::GemmAttrs>(a.node.attrs);
  const Tensor<T>& ta = a.inputs[0];
  const Tensor<T>& tb = a.inputs[1];
  const GemmDims d = GetGemmDims(attrs, ta, tb);
  T* y = a.outputs[0].data;
  const bool has_c = a.inputs.size() > 2 && a.inputs[2].present() && attrs.beta != 0.0;
  if (has_c) {
    const Tensor<T>& c = a.inputs[2];
    const std::vector<int64_t> s = BroadcastStrides(c.shape, {d.m, d.n});
    const T beta = static_cast<T>(attrs.beta);
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) y[i * d.n + j] = beta * c.data[i * s[0] + j * s[1]];
  }
  if (d.k == 0) {
    if (!has_c) std::fill(y, y + d.m * d.n, T(0));
    return absl::OkStatus();
  }
  Gemm<T>(attrs.trans_a, attrs.trans_b, d.m, d.n, d.k, static_cast<T>(attrs.alpha), ta.data, d.lda,
          tb.data, d.ldb, has_c ? T(1) : T(0), y, d.n);
  return absl::OkStatus();
}

template <typename T>
absl::Status GemmBackward(const BackwardArgs<T>& a) {
  const auto& attrs = std::get<graph::GemmAttrs>(a.node.attrs);
  const Tensor<T>& ta = a.inputs[0];
  const Tensor<T>& tb = a.inputs[1];
  const GemmDims d = GetGemmDims(attrs, ta, tb);
  const T* dy = a.grad_outputs[0].data;
  const T alpha = static_cast<T>(attrs.alpha);
  const Tensor<T>& da = a.grad_inputs[0];
  const Tensor<T>& db = a.grad_inputs[1];
  for (size_t i = 0; i < a.grad_inputs.size(); ++i) Fill(a.grad_inputs[i], T(0));
  if (dy == nullptr) return absl::OkStatus();
  // dA: stored [M,K] gets alpha dY op(B)^T; stored [K,M] (trans_a) gets alpha op(B) dY^T.
  if (da.present() && d.k > 0) {
    if (!attrs.trans_a) {
      Gemm<T>(false, !attrs.trans_b, d.m, d.k, d.n, alpha, dy, d.n, tb.data, d.ldb, T(0), da.data,
              d.k);
    } else {
      Gemm<T>(attrs.trans_b, true, d.k, d.m, d.n, alpha, tb.data, d.ldb, dy, d.n, T(0), da.data,
              d.m);
    }
  }
  // dB: stored [K,N] gets alpha op(A)^T dY; stored [N,K] (trans_b) gets alpha dY^T op(A).
  if (db.present() && d.k > 0) {
    if (!attrs.trans_b) {
      Gemm<T>(!attrs.trans_a, false, d.k, d.n, d.m, alpha, ta.data, d.lda, dy, d.n, T(0), db.data,
              d.n);
    } else {
      Gemm<T>(true, attrs.trans_a, d.n, d.k, d.m, alpha, dy, d.n, ta.data, d.lda, T(0), db.data,
              d.k);
    }
  }
  // dC: beta dY summed over the axes C broadcasts along.
  if (a.grad_inputs.size() > 2 && a.grad_inputs[2].present()) {
    const Tensor<T>& dc = a.grad_inputs[2];
    const std::vector<int64_t> s = BroadcastStrides(dc.shape, {d.m, d.n});
    const T beta = static_cast<T>(attrs.beta);
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) dc.data[i * s[0] + j * s[1]] += beta * dy[i * d.n + j];
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// MatMul: numpy matmul. A 1-D A is [1,K] and a 1-D B is [K,1], the unit axis then dropped from Y
// (which leaves Y's memory layout that of [batch..., M, N]). Batch axes broadcast.

struct MatMulPlan {
  int64_t m, n, k;
  graph::Shape batch;  // broadcast batch shape of Y
  std::vector<int64_t> a_stride,
      b_stride;  // per batch axis, in matrices (0: broadcast)
  int64_t batches = 1;
  bool a_full = false;    // A's batch is Y's batch (no broadcast)
  bool b_single = false;  // B has one matrix, shared by every batch
};

MatMulPlan PlanMatMul(graph::Shape a, graph::Shape b) {
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulPlan p;
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  const graph::Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  p.batch = *graph::BroadcastShapes(batch_a, batch_b);  // shape inference checked it
  p.a_stride = BroadcastStrides(batch_a, p.batch);
  p.b_stride = BroadcastStrides(batch_b, p.batch);
  p.batches = graph::NumElements(p.batch);
  p.a_full = graph::NumElements(batch_a) == p.batches;
  p.b_single = graph::NumElements(batch_b) == 1;
  return p;
}

template <typename T>
absl::Status MatMulForward(const ForwardArgs<T>& a) {
  const Tensor<T>& ta = a.inputs[0];
  const Tensor<T>& tb = a.inputs[1];
  const MatMulPlan p = PlanMatMul(ta.shape, tb.shape);
  T* y = a.outputs[0].data;
  if (p.k == 0) {
    Fill(a.outputs[0], T(0));
    return absl::OkStatus();
  }
  if (p.a_full && p.b_single) {  // one product: the batch folds into A's rows
    Gemm<T>(false, false, p.batches * p.m, p.n, p.k, T(1), ta.data, p.k, tb.data, p.n, T(0), y,
            p.n);
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < p.batches; ++i) {
    const T* ai = ta.data + BroadcastOffset(i, p.batch, p.a_stride) * p.m * p.k;
    const T* bi = tb.data + BroadcastOffset(i, p.batch, p.b_stride) * p.k * p.n;
    Gemm<T>(false, false, p.m, p.n, p.k, T(1), ai, p.k, bi, p.n, T(0), y + i * p.m * p.n, p.n);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status MatMulBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& ta = a.inputs[0];
  const Tensor<T>& tb = a.inputs[1];
  const Tensor<T>& da = a.grad_inputs[0];
  const Tensor<T>& db = a.grad_inputs[1];
  const MatMulPlan p = PlanMatMul(ta.shape, tb.shape);
  Fill(da, T(0));
  Fill(db, T(0));
  const T* dy = a.grad_outputs[0].data;
  if (dy == nullptr || p.k == 0) return absl::OkStatus();
  if (p.a_full && p.b_single) {
    if (da.present())
      Gemm<T>(false, true, p.batches * p.m, p.k, p.n, T(1), dy, p.n, tb.data, p.n, T(0), da.data,
              p.k);
    if (db.present())
      Gemm<T>(true, false, p.k, p.n, p.batches * p.m, T(1), ta.data, p.k, dy, p.n, T(0), db.data,
              p.n);
    return absl::OkStatus();
  }
  // Per batch: dA_i += dY_i B_i^T, dB_i += A_i^T dY_i; accumulating sums the broadcast copies.
  for (int64_t i = 0; i < p.batches; ++i) {
    const int64_t a_off = BroadcastOffset(i, p.batch, p.a_stride) * p.m * p.k;
    const int64_t b_off = BroadcastOffset(i, p.batch, p.b_stride) * p.k * p.n;
    const T* dyi = dy + i * p.m * p.n;
    if (da.present())
      Gemm<T>(false, true, p.m, p.k, p.n, T(1), dyi, p.n, tb.data + b_off, p.n, T(1),
              da.data + a_off, p.k);
    if (db.present())
      Gemm<T>(true, false, p.k, p.n, p.m, T(1), ta.data + a_off, p.k, dyi, p.n, T(1),
              db.data + b_off, p.n);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Embedding: Y[i, :] = W[ids[i], :]; dW is the scatter-add of dY's rows (ids get no gradient).

template <typename T>
absl::Status CheckIds(const graph::Node& node, const Tensor<T>& ids, int64_t vocab) {
  const int64_t n = ids.size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids.index(i);
    if (id < 0 || id >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat(
          Label(node), ": id ", id, " at position ", i, " of the ids is outside the table [0, ",
          vocab, "); check the vocabulary size against the data"));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status EmbeddingForward(const ForwardArgs<T>& a) {
  const Tensor<T>& ids = a.inputs[0];
  const Tensor<T>& w = a.inputs[1];
  const int64_t vocab = w.shape[0], dim = w.shape[1];
  if (absl::Status s = CheckIds(a.node, ids, vocab); !s.ok()) return s;
  T* y = a.outputs[0].data;
  const int64_t n = ids.size();
  for (int64_t i = 0; i < n; ++i) {
    const T* row = w.data + ids.index(i) * dim;
    std::copy(row, row + dim, y + i * dim);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status EmbeddingBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dw = a.grad_inputs[1];
  if (!dw.present()) return absl::OkStatus();
  Fill(dw, T(0));
  const T* dy = a.grad_outputs[0].data;
  if (dy == nullptr) return absl::OkStatus();
  const Tensor<T>& ids = a.inputs[0];
  const int64_t vocab = dw.shape[0], dim = dw.shape[1];
  if (absl::Status s = CheckIds(a.node, ids, vocab); !s.ok()) return s;
  const int64_t n = ids.size();
  for (int64_t i = 0; i < n; ++i) {
    T* row = dw.data + ids.index(i) * dim;
    const T* src = dy + i * dim;
    for (int64_t j = 0; j < dim; ++j) row[j] += src[j];
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterDenseKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kGemm) = {&GemmForward<T>, &GemmBackward<T>};
  Slot(table, graph::OpKind::kMatMul) = {&MatMulForward<T>, &MatMulBackward<T>};
  Slot(table, graph::OpKind::kEmbedding) = {&EmbeddingForward<T>, &EmbeddingBackward<T>};
}

template void RegisterDenseKernels<float>(KernelTable<float>&);
template void RegisterDenseKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
