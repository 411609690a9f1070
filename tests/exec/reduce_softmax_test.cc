// CPU kernels of ReduceSum, ReduceMean, ReduceMax, Softmax and LogSoftmax.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::AxesAttrs;
using graph::OpKind;
using graph::Shape;
using testing::GradientCheck;
using testing::OpCase;

// Sum, mean or max over `axes` (empty: all) by a naive loop; the result in keepdims layout.
std::vector<double> NaiveReduce(OpKind kind, const std::vector<double>& x, const Shape& shape,
                                std::vector<int64_t> axes) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  Shape kept = shape;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d]) kept[d] = 1;
  const int64_t n_out = testing::NumElements(kept);
  std::vector<double> acc(n_out, kind == OpKind::kReduceMax ? -INFINITY : 0.0), count(n_out, 0);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t c = rest % shape[d];
      rest /= shape[d];
      o += (reduced[d] ? 0 : c) * scale;
      scale *= kept[d];
    }
    acc[o] = kind == OpKind::kReduceMax ? std::max(acc[o], x[i]) : acc[o] + x[i];
    count[o] += 1;
  }
  if (kind == OpKind::kReduceMean)
    for (int64_t o = 0; o < n_out; ++o) acc[o] /= count[o];
  return acc;
}

struct ReduceVariant {
  std::vector<int64_t> axes;
  bool keepdims;
  Shape expect_shape;
};

TEST(ReduceTest, ForwardMatchesNaiveLoopsAndGradientChecks) {
  const Shape shape = {2, 3, 4};
  const std::vector<ReduceVariant> variants = {
      {{}, true, {1, 1, 1}}, {{}, false, {}},       {{1}, true, {2, 1, 4}},
      {{0, 2}, false, {3}},  {{-1}, false, {2, 3}}, {{0}, true, {1, 3, 4}},
  };
  for (OpKind kind : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    for (const ReduceVariant& v : variants) {
      OpCase c{.kind = kind,
               .attrs = AxesAttrs{.axes = v.axes, .keepdims = v.keepdims},
               .inputs = {{.shape = shape}}};
      auto g = testing::BuildOpGraph(c);
      ASSERT_TRUE(g.ok()) << g.status();
      EXPECT_EQ(g->tensor(g->node(0).outputs[0]).shape, v.expect_shape);
      auto y = testing::RunForwardF64(c);
      ASSERT_TRUE(y.ok()) << y.status();
      const auto expect = NaiveReduce(kind, testing::MakeInputs(c)[0].reals, shape, v.axes);
      ASSERT_EQ((*y)[0].size(), expect.size());
      for (size_t i = 0; i < expect.size(); ++i) {
        EXPECT_NEAR((*y)[0][i], expect[i], 1e-14)
            << graph::OpName(kind) << " variant axes size " << v.axes.size() << " at " << i;
      }
      EXPECT_TRUE(GradientCheck(c)) << graph::OpName(kind) << " keepdims " << v.keepdims;
    }
  }
}

TEST(ReduceTest, MaxGradientIsSharedByTies) {
  OpCase c{.kind = OpKind::kReduceMax,
           .attrs = AxesAttrs{.axes = {1}},
           .inputs = {{.shape = {2, 3}, .values = {1, 5, 5, -1, -2, -3}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{4, 10}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{5, -1}));
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 2, 2, 10, 0, 0}));
}

TEST(ReduceTest, MaxPropagatesNaN) {
  auto y = testing::RunForwardF64({.kind = OpKind::kReduceMax,
                                   .attrs = AxesAttrs{},
                                   .inputs = {{.shape = {3}, .values = {1, std::nan(""), 2}}}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_TRUE(std::isnan((*y)[0][0]));
}

TEST(ReduceTest, EmptyAxisSumsToZeroButMeanAndMaxAreInvalid) {
  auto sum = testing::RunForwardF64(
      {.kind = OpKind::kReduceSum, .attrs = AxesAttrs{.axes = {1}}, .inputs = {{.shape = {2, 0}}}});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ((*sum)[0], (std::vector<double>{0, 0}));
  for (OpKind kind : {OpKind::kReduceMean, OpKind::kReduceMax}) {
    auto y = testing::RunForwardF64(
        {.kind = kind, .attrs = AxesAttrs{.axes = {1}}, .inputs = {{.shape = {2, 0}}}});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(y.status().message().find(absl::StrCat("test_", graph::OpName(kind))),
              std::string::npos)
        << y.status();
  }
}

// Softmax over `axis` of x (shape), by the definition.
std::vector<double> NaiveSoftmax(const std::vector<double>& x, const Shape& shape, int64_t axis,
                                 bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::exp(x[(o * n + i) * inner + j]);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = (o * n + i) * inner + j;
        y[k] = log ? x[k] - std::log(sum) : std::exp(x[k]) / sum;
      }
    }
  return y;
}

TEST(SoftmaxTest, ForwardMatchesTheDefinitionOnEveryAxisAndGradientChecks) {
  const Shape shape = {2, 3, 4};
  for (OpKind kind : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
    for (int64_t axis : {-1, 0, 1}) {
      OpCase c{.kind = kind,
               .attrs = graph::AxisAttrs{axis},
               .inputs = {{.shape = shape, .lo = -3, .hi = 3}}};
      auto y = testing::RunForwardF64(c);
      ASSERT_TRUE(y.ok()) << y.status();
      const auto expect = NaiveSoftmax(testing::MakeInputs(c)[0].reals, shape,
                                       axis < 0 ? axis + 3 : axis, kind == OpKind::kLogSoftmax);
      for (size_t i = 0; i < expect.size(); ++i) {
        EXPECT_NEAR((*y)[0][i], expect[i], 1e-14)
            << graph::OpName(kind) << " axis " << axis << " at " << i;
      }
      EXPECT_TRUE(GradientCheck(c)) << graph::OpName(kind) << " axis " << axis;
    }
  }
}

TEST(SoftmaxTest, LargeLogitsStayFinite) {
  for (OpKind kind : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
    auto y = testing::RunForwardF64({.kind = kind,
                                     .attrs = graph::AxisAttrs{-1},
                                     .inputs = {{.shape = {3}, .values = {1000, 1001, 1002}}}});
    ASSERT_TRUE(y.ok()) << y.status();
    const auto expect = NaiveSoftmax({0, 1, 2}, {3}, 0, kind == OpKind::kLogSoftmax);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR((*y)[0][i], expect[i], 1e-12);
    }
  }
}

TEST(SoftmaxTest, EmptyAxisIsNoWork) {
  for (OpKind kind : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
    EXPECT_TRUE(GradientCheck({.kind = kind, .attrs = graph::AxisAttrs{-1},
                               .inputs = {{.shape = {2, 0}}}}));
  }
}

// Softmax keeps only Y: the backward runs without X.
TEST(SoftmaxTest, BackwardReadsOnlyY) {
  graph::Node node{.name = "sm",
                   .kind = OpKind::kSoftmax,
                   .inputs = {0},
                   .outputs = {1},
                   .attrs = graph::AxisAttrs{-1}};
  std::vector<double> y = {0.2, 0.3, 0.5}, dy = {1, 0, 0}, dx(3);
  std::vector<Tensor<double>> ins = {{.shape = {3}}};
  std::vector<Tensor<double>> outs = {{.shape = {3}, .data = y.data()}};
  std::vector<Tensor<double>> douts = {{.shape = {3}, .data = dy.data()}};
  std::vector<Tensor<double>> dins = {{.shape = {3}, .data = dx.data()}};
  OpState state;
  ASSERT_TRUE(Backward<double>(node, ins, outs, douts, dins, {}, state).ok());
  // dX_i = y_i (dY_i - sum_j dY_j y_j) = y_i ([i == 0] - 0.2).
  EXPECT_NEAR(dx[0], 0.2 * 0.8, 1e-15);
  EXPECT_NEAR(dx[1], -0.3 * 0.2, 1e-15);
  EXPECT_NEAR(dx[2], -0.5 * 0.2, 1e-15);
}

TEST(SoftmaxTest, LargeBatchSplitOverThreadsMatchesTheDefinition) {
  const Shape shape = {1024, 40};
  OpCase c{.kind = OpKind::kSoftmax, .attrs = graph::AxisAttrs{1}, .inputs = {{.shape = shape}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const auto in = testing::MakeInputs(c);
  auto run = testing::RunOp<double>(*g, in, nullptr, KernelContext{.threads = 2});
  ASSERT_TRUE(run.ok()) << run.status();
  const auto expect = NaiveSoftmax(in[0].reals, shape, 1, false);
  for (size_t i = 0; i < expect.size(); ++i) ASSERT_NEAR(run->outputs[0][i], expect[i], 1e-15) << i;
}

}  // namespace
}  // namespace tessera::exec::cpu
