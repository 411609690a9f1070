// CPU kernels of the normalisation family: BatchNormalization (training and
// inference) and LayerNormalization.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::BatchNormAttrs;
using graph::LayerNormAttrs;
using graph::OpKind;
using graph::Shape;
using graph::TensorRole;
using testing::GradientCheck;
using testing::MakeInputs;
using testing::OpCase;

OpCase BatchNormCase(const Shape& x, double var_lo = -1) {
  const int64_t c = x[1];
  return {.kind = OpKind::kBatchNorm,
          .attrs = BatchNormAttrs{.epsilon = 1e-3},
          .inputs = {{.shape = x},
                     {.shape = {c}, .lo = 0.5, .hi = 2},
                     {.shape = {c}},
                     {.shape = {c}, .role = TensorRole::kConstant},
                     {.shape = {c}, .lo = var_lo, .hi = 2, .role = TensorRole::kConstant}}};
}

// Per-channel statistics of X[N, C, inner...] computed directly.
void ChannelStats(const Shape& x, const std::vector<double>& v, std::vector<double>& mean,
                  std::vector<double>& var) {
  const int64_t n = x[0], c = x[1], inner = testing::NumElements(x) / (n * c);
  mean.assign(c, 0);
  var.assign(c, 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    std::vector<double> vals;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) vals.push_back(v[(b * c + ch) * inner + i]);
    for (double a : vals) mean[ch] += a / vals.size();
    for (double a : vals) var[ch] += (a - mean[ch]) * (a - mean[ch]) / vals.size();
  }
}

TEST(BatchNormKernelTest, TrainingForwardUsesBatchStatistics) {
  const Shape x = {3, 2, 2, 2};
  OpCase c = BatchNormCase(x);
  auto in = MakeInputs(c);
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> mean, var;
  ChannelStats(x, in[0].reals, mean, var);
  for (int64_t i = 0; i < testing::NumElements(x); ++i) {
    const int64_t ch = (i / 4) % 2;
    const double expect =
        in[1].reals[ch] * (in[0].reals[i] - mean[ch]) / std::sqrt(var[ch] + 1e-3) + in[2].reals[ch];
    EXPECT_NEAR((*y)[0][i], expect, 1e-12) << i;
  }
}

TEST(BatchNormKernelTest, TrainingLeavesBatchMeanAndUnbiasedVarianceInState) {
  const Shape x = {4, 3};
  OpCase c = BatchNormCase(x);
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto in = MakeInputs(c);
  std::vector<Tensor<double>> views;
  for (size_t i = 0; i < in.size(); ++i)
    views.push_back({.shape = c.inputs[i].shape, .data = in[i].reals.data()});
  std::vector<double> y(12);
  std::vector<Tensor<double>> out = {{.shape = x, .data = y.data()}};
  OpState state;
  ASSERT_TRUE(Forward<double>(g->node(0), views, out, KernelContext{}, state).ok());
  std::vector<double> mean, var;
  ChannelStats(x, in[0].reals, mean, var);
  ASSERT_GE(state.reals.size(), 3u);
  for (int ch = 0; ch < 3; ++ch) {
    EXPECT_NEAR(state.reals[0][ch], mean[ch], 1e-12);
    EXPECT_NEAR(state.reals[2][ch], var[ch] * 4 / 3,
                1e-12);  // unbiased: m / (m - 1)
  }
}

TEST(BatchNormKernelTest, GradientCheckTraining2DAnd4D) {
  // Running statistics are read by nobody in training: their gradient must be exactly zero.
  EXPECT_TRUE(GradientCheck(BatchNormCase({5, 3})));
  EXPECT_TRUE(GradientCheck(BatchNormCase({2, 3, 3, 2})));
  EXPECT_TRUE(GradientCheck(BatchNormCase({2, 2, 5})));
}

// Central differences of sum(r * Y) with the given context (GradientCheck uses the default,
// training one).
void ExpectGradientMatches(const OpCase& c, const KernelContext& ctx) {
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto in = MakeInputs(c);
  const Shape ys = g->tensor(g->node(0).outputs[0]).shape;
  std::vector<std::vector<double>> r(1, std::vector<double>(testing::NumElements(ys)));
  for (size_t i = 0; i < r[0].size(); ++i) r[0][i] = std::sin(1.0 + 3.0 * i);
  auto analytic = testing::RunOp<double>(*g, in, &r, ctx);
  ASSERT_TRUE(analytic.ok()) << analytic.status();
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t k = 0; k < in[i].reals.size(); ++k) {
      auto plus = in, minus = in;
      plus[i].reals[k] += 1e-6;
      minus[i].reals[k] -= 1e-6;
      auto yp = testing::RunOp<double>(*g, plus, nullptr, ctx);
      auto ym = testing::RunOp<double>(*g, minus, nullptr, ctx);
      ASSERT_TRUE(yp.ok() && ym.ok());
      double numeric = 0;
      for (size_t j = 0; j < r[0].size(); ++j)
        numeric += r[0][j] * (yp->outputs[0][j] - ym->outputs[0][j]) / 2e-6;
      EXPECT_NEAR(analytic->grad_inputs[i][k], numeric, 1e-6) << "input " << i << "[" << k << "]";
    }
}

TEST(BatchNormKernelTest, InferenceUsesRunningStatisticsAndDifferentiatesThem) {
  const Shape x = {2, 3, 2};
  OpCase c = BatchNormCase(x, /*var_lo=*/0.2);
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto in = MakeInputs(c);
  auto run = testing::RunOp<double>(*g, in, nullptr, KernelContext{.training = false});
  ASSERT_TRUE(run.ok()) << run.status();
  for (int64_t i = 0; i < 12; ++i) {
    const int64_t ch = (i / 2) % 3;
    const double expect =
        in[1].reals[ch] * (in[0].reals[i] - in[3].reals[ch]) / std::sqrt(in[4].reals[ch] + 1e-3) +
        in[2].reals[ch];
    EXPECT_NEAR(run->outputs[0][i], expect, 1e-12);
  }
  ExpectGradientMatches(c, KernelContext{.training = false});
}

TEST(BatchNormKernelTest, InferenceWithNegativeRunningVarianceIsInvalidArgument) {
  OpCase c = BatchNormCase({2, 2});
  c.inputs[4].values = {1.0, -5.0};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto run = testing::RunOp<double>(*g, MakeInputs(c), nullptr, KernelContext{.training = false});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("test_BatchNormalization"), std::string::npos);
  EXPECT_NE(run.status().message().find("running_var[1]"), std::string::npos) << run.status();
}

// ----- LayerNormalization --------------------------------------------------------------------

struct LayerNormVariant {
  Shape x;
  int64_t axis;
  bool bias;
};

const std::vector<LayerNormVariant>& LayerNormVariants() {
  static const auto* v = new std::vector<LayerNormVariant>{
      {{4, 6}, -1, true}, {{2, 3, 4}, 1, true}, {{2, 3, 4}, -1, false}, {{3, 5}, 0, true}};
  return *v;
}

OpCase LayerNormCase(const LayerNormVariant& v) {
  const int64_t axis = v.axis < 0 ? v.axis + static_cast<int64_t>(v.x.size()) : v.axis;
  const Shape tail(v.x.begin() + axis, v.x.end());
  OpCase c{.kind = OpKind::kLayerNorm, .attrs = LayerNormAttrs{.axis = v.axis, .epsilon = 1e-4}};
  c.inputs.push_back({.shape = v.x});
  c.inputs.push_back({.shape = tail, .lo = 0.5, .hi = 1.5});
  if (v.bias) c.inputs.push_back({.shape = tail});
  return c;
}

TEST(LayerNormKernelTest, ForwardNormalisesTrailingAxes) {
  for (const LayerNormVariant& v : LayerNormVariants()) {
    OpCase c = LayerNormCase(v);
    auto in = MakeInputs(c);
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << y.status();
    const int64_t cols = testing::NumElements(c.inputs[1].shape);
    const int64_t rows = testing::NumElements(v.x) / cols;
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < cols; ++j) mean += in[0].reals[r * cols + j] / cols;
      for (int64_t j = 0; j < cols; ++j)
        var += std::pow(in[0].reals[r * cols + j] - mean, 2) / cols;
      for (int64_t j = 0; j < cols; ++j) {
        const double expect =
            (in[0].reals[r * cols + j] - mean) / std::sqrt(var + 1e-4) * in[1].reals[j] +
            (v.bias ? in[2].reals[j] : 0.0);
        EXPECT_NEAR((*y)[0][r * cols + j], expect, 1e-12) << "axis " << v.axis;
      }
    }
  }
}

TEST(LayerNormKernelTest, GradientCheckAxesAndOptionalBias) {
  for (const LayerNormVariant& v : LayerNormVariants())
    EXPECT_TRUE(GradientCheck(LayerNormCase(v))) << graph::ShapeString(v.x) << " axis " << v.axis;
}

}  // namespace
}  // namespace tessera::exec::cpu
