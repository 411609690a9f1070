// CPU kernels of the convolution and pooling family: Conv, MaxPool,
// AveragePool, GlobalAveragePool, against naive loops written from the
// definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::ConvAttrs;
using graph::OpKind;
using graph::PoolAttrs;
using graph::Shape;
using testing::GradientCheck;
using testing::MakeInputs;
using testing::OpCase;

// Every multi-index of `shape`, row-major order.
std::vector<std::vector<int64_t>> AllIndices(const Shape& shape) {
  std::vector<std::vector<int64_t>> all;
  const int64_t n = testing::NumElements(shape);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx(shape.size());
    int64_t rem = i;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
    }
    all.push_back(std::move(idx));
  }
  return all;
}

int64_t Offset(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
  return off;
}

// ----- Conv ----------------------------------------------------------------------------------

struct ConvVariant {
  std::string name;
  Shape x, w;
  ConvAttrs attrs;
  bool bias;
};

std::vector<ConvVariant> ConvVariants() {
  return {
      {"1d_stride_dilation_pads",
       {2, 3, 9},
       {4, 3, 3},
       ConvAttrs{.strides = {2}, .pads = {2, 1}, .dilations = {2}},
       true},
      {"2d_plain", {2, 2, 5, 4}, {3, 2, 3, 3}, ConvAttrs{}, false},
      {"2d_strides_pads_dilations_groups",
       {1, 4, 6, 7},
       {6, 2, 3, 2},
       ConvAttrs{.kernel_shape = {3, 2},
                 .strides = {2, 1},
                 .pads = {1, 0, 0, 2},
                 .dilations = {1, 2},
                 .groups = 2},
       true},
      {"2d_depthwise_multiplier2",
       {2, 3, 5, 5},
       {6, 1, 3, 3},
       ConvAttrs{.pads = {1, 1, 1, 1}, .groups = 3},
       true},
      {"2d_pointwise_direct", {2, 4, 3, 3}, {5, 4, 1, 1}, ConvAttrs{}, true},
      {"2d_pointwise_strided", {1, 2, 5, 4}, {3, 2, 1, 1}, ConvAttrs{.strides = {2, 2}}, false},
      {"3d",
       {1, 2, 4, 3, 4},
       {2, 2, 2, 2, 3},
       ConvAttrs{.strides = {1, 2, 1}, .pads = {1, 0, 1, 0, 1, 0}},
       true},
  };
}

OpCase ConvCase(const ConvVariant& v) {
  OpCase c{.kind = OpKind::kConv, .attrs = v.attrs};
  c.inputs.push_back({.shape = v.x});
  c.inputs.push_back({.shape = v.w});
  if (v.bias) c.inputs.push_back({.shape = {v.w[0]}});
  return c;
}

// Direct definition: Y[n, co, o] = B[co] + sum_{ci, k} X[n, g*Cg + ci, o*s - p + k*d] W[co, ci, k].
std::vector<double> NaiveConv(const ConvVariant& v, const Shape& y_shape,
                              const std::vector<testing::Storage>& in) {
  const size_t s = v.x.size() - 2;
  const auto fill = [](const std::vector<int64_t>& a, size_t n, int64_t f) {
    return a.empty() ? std::vector<int64_t>(n, f) : a;
  };
  const auto strides = fill(v.attrs.strides, s, 1), dil = fill(v.attrs.dilations, s, 1),
             pads = fill(v.attrs.pads, 2 * s, 0);
  const int64_t groups = v.attrs.groups, cg = v.x[1] / groups, coutg = v.w[0] / groups;
  const Shape kernel(v.w.begin() + 2, v.w.end());
  std::vector<double> y(testing::NumElements(y_shape), 0.0);
  for (const auto& yi : AllIndices(y_shape)) {
    const int64_t n = yi[0], co = yi[1], g = co / coutg;
    double sum = v.bias ? in[2].reals[co] : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (const auto& k : AllIndices(kernel)) {
        std::vector<int64_t> xi = {n, g * cg + ci};
        bool inside = true;
        for (size_t d = 0; d < s; ++d) {
          const int64_t p = yi[2 + d] * strides[d] - pads[d] + k[d] * dil[d];
          inside = inside && p >= 0 && p < v.x[2 + d];
          xi.push_back(p);
        }
        if (!inside) continue;
        std::vector<int64_t> wi = {co, ci};
        wi.insert(wi.end(), k.begin(), k.end());
        sum += in[0].reals[Offset(v.x, xi)] * in[1].reals[Offset(v.w, wi)];
      }
    y[Offset(y_shape, yi)] = sum;
  }
  return y;
}

TEST(ConvKernelTest, ForwardMatchesDirectDefinition) {
  for (const ConvVariant& v : ConvVariants()) {
    OpCase c = ConvCase(v);
    auto g = testing::BuildOpGraph(c);
    ASSERT_TRUE(g.ok()) << v.name << ": " << g.status();
    const Shape y_shape = g->tensor(g->node(0).outputs[0]).shape;
    auto in = MakeInputs(c);
    auto run = testing::RunOp<double>(*g, in, nullptr);
    ASSERT_TRUE(run.ok()) << run.status();
    const std::vector<double> expect = NaiveConv(v, y_shape, in);
    ASSERT_EQ(run->outputs[0].size(), expect.size()) << v.name;
    for (size_t i = 0; i < expect.size(); ++i)
      ASSERT_NEAR(run->outputs[0][i], expect[i], 1e-12) << v.name << " at " << i;
  }
}

TEST(ConvKernelTest, GradientCheckEveryVariant) {
  for (const ConvVariant& v : ConvVariants()) EXPECT_TRUE(GradientCheck(ConvCase(v))) << v.name;
}

TEST(ConvKernelTest, HandValues1D) {
  // X = [1 2 3 4], W = [1 -1], pads 1 each side: [0-1, 1-2, 2-3, 3-4, 4-0] + bias 10.
  OpCase c{.kind = OpKind::kConv,
           .attrs = ConvAttrs{.pads = {1, 1}},
           .inputs = {{.shape = {1, 1, 4}, .values = {1, 2, 3, 4}},
                      {.shape = {1, 1, 2}, .values = {1, -1}},
                      {.shape = {1}, .values = {10}}}};
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{9, 9, 9, 9, 14}));
}

TEST(ConvKernelTest, LargeBatchSplitIntoChunksOfSamples) {
  // Columns of 2 x 2^20 values per sample: two samples share a product, the third has its own.
  const int64_t len = int64_t{1} << 20;
  OpCase c{.kind = OpKind::kConv, .inputs = {{.shape = {3, 2, len}}, {.shape = {2, 2, 1}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto in = MakeInputs(c);
  std::vector<std::vector<double>> dy(1, std::vector<double>(3 * 2 * len));
  for (size_t i = 0; i < dy[0].size(); ++i) dy[0][i] = static_cast<double>(i % 7) - 3;
  auto run = testing::RunOp<double>(*g, in, &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  const auto& x = in[0].reals;
  const auto& w = in[1].reals;
  std::vector<double> dw(4, 0.0);
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t p = 0; p < len; p += 4099) {
      for (int64_t co = 0; co < 2; ++co) {
        const double expect =
            w[co * 2] * x[(n * 2) * len + p] + w[co * 2 + 1] * x[(n * 2 + 1) * len + p];
        ASSERT_NEAR(run->outputs[0][(n * 2 + co) * len + p], expect, 1e-12) << n << "," << p;
      }
      for (int64_t ci = 0; ci < 2; ++ci) {
        const double expect =
            w[ci] * dy[0][(n * 2) * len + p] + w[2 + ci] * dy[0][(n * 2 + 1) * len + p];
        ASSERT_NEAR(run->grad_inputs[0][(n * 2 + ci) * len + p], expect, 1e-12) << n << "," << p;
      }
    }
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t co = 0; co < 2; ++co)
      for (int64_t ci = 0; ci < 2; ++ci)
        for (int64_t p = 0; p < len; ++p)
          dw[co * 2 + ci] += dy[0][(n * 2 + co) * len + p] * x[(n * 2 + ci) * len + p];
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(run->grad_inputs[1][i], dw[i], 1e-9 * len);
}

// ----- MaxPool / AveragePool -----------------------------------------------------------------

struct PoolVariant {
  std::string name;
  Shape x;
  PoolAttrs attrs;
};

std::vector<PoolVariant> PoolVariants(bool count_include_pad) {
  return {
      {"2d_k2_s2", {2, 2, 4, 6}, PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}}},
      {"2d_k3_s1_pads",
       {1, 2, 5, 4},
       PoolAttrs{
           .kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}, .count_include_pad = count_include_pad}},
      {"2d_k3_s2_ceil_asym_pads",
       {1, 3, 7, 6},
       PoolAttrs{.kernel_shape = {3, 2},
                 .strides = {2, 2},
                 .pads = {1, 0, 0, 1},
                 .ceil_mode = true,
                 .count_include_pad = count_include_pad}},
      {"1d_ceil",
       {2, 1, 7},
       PoolAttrs{.kernel_shape = {3},
                 .strides = {3},
                 .ceil_mode = true,
                 .count_include_pad = count_include_pad}},
      {"3d_pads",
       {1, 1, 3, 4, 3},
       PoolAttrs{.kernel_shape = {2, 3, 2},
                 .strides = {1, 2, 2},
                 .pads = {1, 1, 0, 0, 1, 1},
                 .count_include_pad = count_include_pad}},
  };
}

// Max or average over the window, from the definitions (PyTorch/ONNX conventions).
std::vector<double> NaivePool(bool max, const PoolVariant& v, const Shape& y_shape,
                              const std::vector<double>& x) {
  const size_t s = v.x.size() - 2;
  const auto strides = v.attrs.strides.empty() ? std::vector<int64_t>(s, 1) : v.attrs.strides;
  const auto pads = v.attrs.pads.empty() ? std::vector<int64_t>(2 * s, 0) : v.attrs.pads;
  std::vector<double> y(testing::NumElements(y_shape));
  for (const auto& yi : AllIndices(y_shape)) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    int64_t inside = 0, padded = 1;
    for (size_t d = 0; d < s; ++d) {
      const int64_t start = yi[2 + d] * strides[d] - pads[d];
      padded *= std::min(start + v.attrs.kernel_shape[d], v.x[2 + d] + pads[s + d]) - start;
    }
    for (const auto& k : AllIndices(v.attrs.kernel_shape)) {
      std::vector<int64_t> xi = {yi[0], yi[1]};
      bool ok = true;
      for (size_t d = 0; d < s; ++d) {
        const int64_t p = yi[2 + d] * strides[d] - pads[d] + k[d];
        ok = ok && p >= 0 && p < v.x[2 + d];
        xi.push_back(p);
      }
      if (!ok) continue;
      const double xv = x[Offset(v.x, xi)];
      best = std::max(best, xv);
      sum += xv;
      ++inside;
    }
    y[Offset(y_shape, yi)] =
        max ? best : sum / static_cast<double>(v.attrs.count_include_pad ? padded : inside);
  }
  return y;
}

void ExpectPoolMatchesNaive(OpKind kind, const PoolVariant& v) {
  OpCase c{.kind = kind, .attrs = v.attrs, .inputs = {{.shape = v.x}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << v.name << ": " << g.status();
  const Shape y_shape = g->tensor(g->node(0).outputs[0]).shape;
  auto in = MakeInputs(c);
  auto run = testing::RunOp<double>(*g, in, nullptr);
  ASSERT_TRUE(run.ok()) << run.status();
  const auto expect = NaivePool(kind == OpKind::kMaxPool, v, y_shape, in[0].reals);
  ASSERT_EQ(run->outputs[0].size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i)
    EXPECT_NEAR(run->outputs[0][i], expect[i], 1e-12) << v.name << " at " << i;
}

TEST(PoolKernelTest, MaxPoolMatchesDefinition) {
  for (const PoolVariant& v : PoolVariants(false)) ExpectPoolMatchesNaive(OpKind::kMaxPool, v);
}

TEST(PoolKernelTest, AveragePoolMatchesDefinitionWithAndWithoutPadCounting) {
  for (bool include : {false, true})
    for (const PoolVariant& v : PoolVariants(include))
      ExpectPoolMatchesNaive(OpKind::kAveragePool, v);
}

TEST(PoolKernelTest, LargeInputsSplitAcrossThreadsMatchDefinition) {
  for (bool include : {false, true}) {
    const PoolVariant v{"large",
                        {2, 16, 33, 40},
                        PoolAttrs{.kernel_shape = {3, 2},
                                  .strides = {2, 2},
                                  .pads = {1, 0, 1, 1},
                                  .ceil_mode = true,
                                  .count_include_pad = include}};
    ExpectPoolMatchesNaive(OpKind::kAveragePool, v);
    if (!include) ExpectPoolMatchesNaive(OpKind::kMaxPool, v);
  }
}

TEST(PoolKernelTest, LargeAveragePoolBackwardIsTheAdjoint) {
  // AveragePool is linear, so <dY, pool(X)> = <pool^T(dY), X> for any X and dY.
  OpCase c{.kind = OpKind::kAveragePool,
           .attrs = PoolAttrs{.kernel_shape = {3, 3}, .strides = {2, 1}, .pads = {1, 1, 1, 1}},
           .inputs = {{.shape = {2, 16, 33, 40}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto in = MakeInputs(c);
  const int64_t ny = testing::NumElements(g->tensor(g->node(0).outputs[0]).shape);
  std::vector<std::vector<double>> dy(1, std::vector<double>(ny));
  for (int64_t i = 0; i < ny; ++i) dy[0][i] = std::cos(0.37 * i);
  auto run = testing::RunOp<double>(*g, in, &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < ny; ++i) lhs += dy[0][i] * run->outputs[0][i];
  for (size_t i = 0; i < in[0].reals.size(); ++i) rhs += run->grad_inputs[0][i] * in[0].reals[i];
  EXPECT_NEAR(lhs, rhs, 1e-9 * std::max(1.0, std::abs(lhs)));
}

TEST(PoolKernelTest, GradientCheckEveryVariant) {
  for (bool include : {false, true})
    for (const PoolVariant& v : PoolVariants(include)) {
      EXPECT_TRUE(GradientCheck(
          {.kind = OpKind::kAveragePool, .attrs = v.attrs, .inputs = {{.shape = v.x}}}))
          << "AveragePool " << v.name << " include_pad=" << include;
      if (include) continue;  // MaxPool has no count_include_pad
      EXPECT_TRUE(
          GradientCheck({.kind = OpKind::kMaxPool, .attrs = v.attrs, .inputs = {{.shape = v.x}}}))
          << "MaxPool " << v.name;
    }
}

TEST(PoolKernelTest, AveragePoolHandValuesPadsAndCeilMode) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const PoolAttrs padded{.kernel_shape = {3}, .strides = {2}, .pads = {1, 1}};
  PoolAttrs include = padded;
  include.count_include_pad = true;
  const PoolAttrs ceil{
      .kernel_shape = {2}, .strides = {2}, .ceil_mode = true, .count_include_pad = true};
  const std::vector<std::pair<PoolAttrs, std::vector<double>>> cases = {
      {padded, {1.5, 3, 4.5}}, {include, {1, 3, 3}}, {ceil, {1.5, 3.5, 5}}};
  for (const auto& [attrs, expect] : cases) {
    auto y = testing::RunForwardF64({.kind = OpKind::kAveragePool,
                                     .attrs = attrs,
                                     .inputs = {{.shape = {1, 1, 5}, .values = x}}});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ((*y)[0].size(), expect.size());
    for (size_t i = 0; i < expect.size(); ++i) EXPECT_DOUBLE_EQ((*y)[0][i], expect[i]);
  }
}

TEST(PoolKernelTest, MaxPoolBackwardRoutesToTheArgMax) {
  OpCase c{.kind = OpKind::kMaxPool,
           .attrs = PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}},
           .inputs = {{.shape = {1, 1, 2, 4}, .values = {1, 5, 2, 0, 3, 4, 8, 7}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{10, 20}};
  auto run = testing::RunOp<double>(*g, MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{5, 8}));
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 10, 0, 0, 0, 0, 20, 0}));
}

// ----- GlobalAveragePool ---------------------------------------------------------------------

TEST(GlobalAveragePoolKernelTest, ForwardIsPlaneMeanAndBackwardSpreadsEvenly) {
  OpCase c{.kind = OpKind::kGlobalAveragePool,
           .inputs = {{.shape = {1, 2, 2, 2}, .values = {1, 2, 3, 4, 10, 20, 30, 40}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{4, 8}};
  auto run = testing::RunOp<double>(*g, MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{2.5, 25}));
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2}));
}

TEST(GlobalAveragePoolKernelTest, GradientCheck1DAnd3D) {
  EXPECT_TRUE(
      GradientCheck({.kind = OpKind::kGlobalAveragePool, .inputs = {{.shape = {2, 3, 5}}}}));
  EXPECT_TRUE(
      GradientCheck({.kind = OpKind::kGlobalAveragePool, .inputs = {{.shape = {1, 2, 2, 3, 2}}}}));
}

}  // namespace
}  // namespace tessera::exec::cpu
