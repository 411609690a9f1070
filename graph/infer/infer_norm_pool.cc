// Shape inference: batch and layer normalization, pooling.
#include "absl/strings/str_cat.h"
#include "tessera/graph/infer/infer_impl.h"

namespace tessera::graph::infer {

Result InferBatchNorm(const InferContext& c) {
  if (c.rank(0) < 2) return c.Error("X must be [N, C, ...]");
  const Shape channel = {c.shape(0)[1]};
  for (int i = 1; i <= 4; ++i) {
    if (c.shape(i) != channel) {
      return c.Error(absl::StrCat("scale, bias, mean and var must all be [", channel[0], "]"));
    }
  }
  return One(c.shape(0), c.dtype(0));
}

Result InferLayerNorm(const InferContext& c) {
  const auto& a = c.attrs<LayerNormAttrs>();
  const auto axis = NormalizeAxis(a.axis, c.rank(0));
  if (!axis) return c.Error(absl::StrCat("axis ", a.axis, " is out of range"));
  const Shape normalized(c.shape(0).begin() + *axis, c.shape(0).end());
  for (int i = 1; i < c.num_inputs(); ++i) {
    if (c.has_input(i) && c.shape(i) != normalized) {
      return c.Error(absl::StrCat("scale and bias must be ", ShapeString(normalized),
                                  " (the dimensions from axis ", *axis, " on)"));
    }
  }
  return One(c.shape(0), c.dtype(0));
}

Result InferPool(const InferContext& c) {
  const auto& a = c.attrs<PoolAttrs>();
  const Shape& x = c.shape(0);
  if (x.size() < 3) return c.Error("X must be [N, C, spatial...]");
  const size_t spatial = x.size() - 2;
  const auto strides = a.strides.empty() ? std::vector<int64_t>(spatial, 1) : a.strides;
  const auto pads = a.pads.empty() ? std::vector<int64_t>(2 * spatial, 0) : a.pads;
  if (a.kernel_shape.size() != spatial || strides.size() != spatial ||
      pads.size() != 2 * spatial) {
    return c.Error(absl::StrCat("kernel_shape and strides need ", spatial, " values and pads ",
                                2 * spatial));
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < spatial; ++i) {
    if (a.kernel_shape[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[spatial + i] < 0) {
      return c.Error("kernel and strides must be >= 1 and pads >= 0");
    }
    if (pads[i] >= a.kernel_shape[i] || pads[spatial + i] >= a.kernel_shape[i]) {
      return c.Error("pads must be smaller than the kernel");
    }
    const int64_t o = WindowOutput(x[2 + i], a.kernel_shape[i], strides[i], pads[i],
                                   pads[spatial + i], 1, a.ceil_mode);
    if (o < 1) {
      return c.Error(absl::StrCat("kernel ", a.kernel_shape[i], " is larger than spatial axis ",
                                  i, " (", x[2 + i], " plus padding)"));
    }
    out.push_back(o);
  }
  return One(std::move(out), c.dtype(0));
}

Result InferGlobalPool(const InferContext& c) {
  if (c.rank(0) < 3) return c.Error("X must be [N, C, spatial...]");
  Shape out = c.shape(0);
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  return One(std::move(out), c.dtype(0));
}

}  // namespace tessera::graph::infer
