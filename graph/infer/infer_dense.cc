// Shape inference: convolution, matrix products, embedding, LSTM.
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/graph/infer/infer_impl.h"

namespace tessera::graph::infer {
namespace {

// Attribute list of length `n`, or `fill` repeated when empty.
std::vector<int64_t> OrFill(const std::vector<int64_t>& v, size_t n, int64_t fill) {
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

}  // namespace

Result InferConv(const InferContext& c) {
  const auto& a = c.attrs<ConvAttrs>();
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (x.size() < 3) return c.Error("X must be [N, C, spatial...] with at least one spatial axis");
  const size_t spatial = x.size() - 2;
  if (w.size() != x.size()) {
    return c.Error(absl::StrCat("W must have rank ", x.size(), " ([Cout, Cin/groups, k...])"));
  }
  if (a.groups < 1 || x[1] % a.groups != 0 || w[0] % a.groups != 0) {
    return c.Error(absl::StrCat("groups=", a.groups, " must divide input channels ", x[1],
                                " and output channels ", w[0]));
  }
  if (w[1] != x[1] / a.groups) {  // groups divides x[1]; no overflow
    return c.Error(absl::StrCat("W has ", w[1], " input channels per group; X has ", x[1],
                                " channels in ", a.groups, " groups, so expected ",
                                x[1] / a.groups));
  }
  const auto kernel = ConvKernelShape(a, w);
  const auto strides = OrFill(a.strides, spatial, 1);
  const auto dilations = OrFill(a.dilations, spatial, 1);
  const auto pads = OrFill(a.pads, 2 * spatial, 0);
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return c.Error(absl::StrCat("kernel_shape, strides and dilations need ", spatial,
                                " values and pads ", 2 * spatial));
  }
  Shape out = {x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] != w[2 + i]) {
      return c.Error(absl::StrCat("kernel_shape[", i, "]=", kernel[i], " differs from W's ",
                                  w[2 + i]));
    }
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[spatial + i] < 0) {
      return c.Error("strides and dilations must be >= 1 and pads >= 0");
    }
    const int64_t o = WindowOutput(x[2 + i], kernel[i], strides[i], pads[i], pads[spatial + i],
                                   dilations[i], false);
    if (o < 1) {
      return c.Error(absl::StrCat("the kernel (", kernel[i], ", dilation ", dilations[i],
                                  ") is larger than spatial axis ", i, " (", x[2 + i],
                                  " plus padding)"));
    }
    out.push_back(o);
  }
  if (c.has_input(2) && c.shape(2) != Shape{w[0]}) {
    return c.Error(absl::StrCat("bias B must be [", w[0], "]"));
  }
  return One(std::move(out), c.dtype(0));
}

Result InferGemm(const InferContext& c) {
  const auto& a = c.attrs<GemmAttrs>();
  if (c.rank(0) != 2 || c.rank(1) != 2) return c.Error("A and B must be 2-D");
  const int64_t m = a.trans_a ? c.shape(0)[1] : c.shape(0)[0];
  const int64_t k = a.trans_a ? c.shape(0)[0] : c.shape(0)[1];
  const int64_t kb = a.trans_b ? c.shape(1)[1] : c.shape(1)[0];
  const int64_t n = a.trans_b ? c.shape(1)[0] : c.shape(1)[1];
  if (k != kb) {
    return c.Error(absl::StrCat("inner dimensions differ: op(A) is [", m, ",", k, "], op(B) is [",
                                kb, ",", n, "] (trans_a=", a.trans_a, ", trans_b=", a.trans_b,
                                ")"));
  }
  if (c.has_input(2) && BroadcastShapes(c.shape(2), {m, n}) != Shape{m, n}) {
    return c.Error(absl::StrCat("C must broadcast to [", m, ",", n, "]"));
  }
  return One({m, n}, c.dtype(0));
}

Result InferMatMul(const InferContext& c) {
  Shape a = c.shape(0);
  Shape b = c.shape(1);
  if (a.empty() || b.empty()) return c.Error("MatMul inputs must have rank >= 1");
  const bool a_vec = a.size() == 1;
  const bool b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back();
  const int64_t kb = b[b.size() - 2], n = b.back();
  if (k != kb) {
    return c.Error(absl::StrCat("inner dimensions differ: ", k, " (last of A) vs ", kb,
                                " (second to last of B)"));
  }
  const Shape batch_a(a.begin(), a.end() - 2);
  const Shape batch_b(b.begin(), b.end() - 2);
  auto batch = BroadcastShapes(batch_a, batch_b);
  if (!batch) {
    return c.Error(absl::StrCat("batch dimensions ", ShapeString(batch_a), " and ",
                                ShapeString(batch_b), " do not broadcast"));
  }
  Shape out = *batch;
  if (!a_vec) out.push_back(m);
  if (!b_vec) out.push_back(n);
  return One(std::move(out), c.dtype(0));
}

Result InferEmbedding(const InferContext& c) {
  if (c.dtype(0) != DType::kI32 && c.dtype(0) != DType::kI64) {
    return c.Error("ids (input 0) must be i32 or i64");
  }
  if (c.rank(1) != 2) return c.Error("the table W (input 1) must be [vocab, dim]");
  Shape out = c.shape(0);
  out.push_back(c.shape(1)[1]);
  return One(std::move(out), c.dtype(1));
}

Result InferLstm(const InferContext& c) {
  const auto& a = c.attrs<LstmAttrs>();
  const int64_t h = a.hidden_size;
  const int64_t dirs = a.direction == LstmDirection::kBidirectional ? 2 : 1;
  if (h < 1) return c.Error("hidden_size must be >= 1");
  if (h > std::numeric_limits<int64_t>::max() / 8) return c.Error("hidden_size is too large");
  if (a.layout != 0 && a.layout != 1) return c.Error("layout must be 0 or 1");
  if (c.rank(0) != 3) return c.Error("X must be 3-D ([T,B,I] for layout 0, [B,T,I] for 1)");
  const int64_t t = a.layout == 0 ? c.shape(0)[0] : c.shape(0)[1];
  const int64_t b = a.layout == 0 ? c.shape(0)[1] : c.shape(0)[0];
  const int64_t in = c.shape(0)[2];
  if (c.shape(1) != Shape{dirs, 4 * h, in}) {
    return c.Error(absl::StrCat("W must be [", dirs, ",", 4 * h, ",", in, "]"));
  }
  if (c.shape(2) != Shape{dirs, 4 * h, h}) {
    return c.Error(absl::StrCat("R must be [", dirs, ",", 4 * h, ",", h, "]"));
  }
  if (c.has_input(3) && c.shape(3) != Shape{dirs, 8 * h}) {
    return c.Error(absl::StrCat("B must be [", dirs, ",", 8 * h, "]"));
  }
  if (c.has_input(4) && c.shape(4) != Shape{b}) {
    return c.Error(absl::StrCat("sequence_lens must be [", b, "]"));
  }
  const Shape state = a.layout == 0 ? Shape{dirs, b, h} : Shape{b, dirs, h};
  for (int i : {5, 6}) {
    if (c.has_input(i) && c.shape(i) != state) {
      return c.Error(absl::StrCat(i == 5 ? "initial_h" : "initial_c", " must be ",
                                  ShapeString(state)));
    }
  }
  const Shape y = a.layout == 0 ? Shape{t, dirs, b, h} : Shape{b, t, dirs, h};
  const DType dt = c.dtype(0);
  return std::vector<TensorType>{{y, dt}, {state, dt}, {state, dt}};
}

}  // namespace tessera::graph::infer
