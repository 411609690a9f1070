// CPU kernels of the unary element-wise ops: forward against the C library, a numeric gradient
// check of every op, the attribute variants (LeakyRelu alpha, Clip bounds) and dtype errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::OpKind;
using graph::ScalarAttrs;
using testing::GradientCheck;
using testing::OpCase;
using testing::RunForwardF64;

struct UnaryCase {
  OpKind kind;
  std::function<double(double)> reference;
  double lo = -2, hi = 2;  // input range (away from where the op is undefined)
  graph::OpAttrs attrs = {};
};

std::vector<UnaryCase> Cases() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {OpKind::kRelu, [](double x) { return std::max(x, 0.0); }},
      {OpKind::kLeakyRelu, [](double x) { return x > 0 ? x : 0.2 * x; }, -2, 2,
       ScalarAttrs{.alpha = 0.2}},
      {OpKind::kSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {OpKind::kTanh, [](double x) { return std::tanh(x); }},
      {OpKind::kGelu, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {OpKind::kErf, [](double x) { return std::erf(x); }},
      {OpKind::kSqrt, [](double x) { return std::sqrt(x); }, 0.2, 3},
      {OpKind::kExp, [](double x) { return std::exp(x); }},
      {OpKind::kLog, [](double x) { return std::log(x); }, 0.2, 3},
      {OpKind::kNeg, [](double x) { return -x; }},
      {OpKind::kReciprocal, [](double x) { return 1 / x; }, 0.5, 2},
      {OpKind::kAbs, [](double x) { return std::abs(x); }},
      {OpKind::kClip, [](double x) { return std::min(std::max(x, -0.5), 0.75); }, -2, 2,
       ScalarAttrs{.alpha = -0.5, .beta = 0.75}},
      {OpKind::kClip, [](double x) { return std::min(x, 0.3); }, -2, 2,
       ScalarAttrs{.alpha = -inf, .beta = 0.3}},
  };
}

OpCase MakeCase(const UnaryCase& u, graph::Shape shape, uint32_t seed = 1) {
  return OpCase{.kind = u.kind,
                .attrs = u.attrs,
                .inputs = {{.shape = std::move(shape), .lo = u.lo, .hi = u.hi}},
                .seed = seed};
}

TEST(ElementwiseUnaryTest, ForwardMatchesTheCLibrary) {
  for (const UnaryCase& u : Cases()) {
    const OpCase c = MakeCase(u, {3, 7});
    auto y = RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << graph::OpName(u.kind) << ": " << y.status();
    const std::vector<double> x = testing::MakeInputs(c)[0].reals;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR((*y)[0][i], u.reference(x[i]), 1e-12 * std::max(1.0, std::abs(u.reference(x[i]))))
          << graph::OpName(u.kind) << " at x = " << x[i];
    }
  }
}

TEST(ElementwiseUnaryTest, GradientCheckEveryOp) {
  for (const UnaryCase& u : Cases()) {
    EXPECT_TRUE(GradientCheck(MakeCase(u, {2, 3, 5}))) << graph::OpName(u.kind);
    EXPECT_TRUE(GradientCheck(MakeCase(u, {}, 7))) << graph::OpName(u.kind) << " on a scalar";
  }
}

TEST(ElementwiseUnaryTest, ClipGradientIsZeroOutsideTheBounds) {
  OpCase c{.kind = OpKind::kClip,
           .attrs = ScalarAttrs{.alpha = -1, .beta = 1},
           .inputs = {{.shape = {4}, .values = {-3, -0.5, 0.5, 3}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 2, 3, 4}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{-1, -0.5, 0.5, 1}));
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 2, 3, 0}));
}

TEST(ElementwiseUnaryTest, LeakyReluScalesNegativeGradientsByAlpha) {
  OpCase c{.kind = OpKind::kLeakyRelu,
           .attrs = ScalarAttrs{.alpha = 0.1},
           .inputs = {{.shape = {3}, .values = {-2, 0.5, 4}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{10, 10, 10}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_NEAR(run->outputs[0][0], -0.2, 1e-15);
  EXPECT_NEAR(run->grad_inputs[0][0], 1.0, 1e-15);
  EXPECT_EQ(run->grad_inputs[0][2], 10);
}

// A large tensor goes through the thread pool; the result must not depend on it.
TEST(ElementwiseUnaryTest, LargeTensorsSplitOverThreadsGiveTheSameValues) {
  const int64_t n = 200003;
  OpCase c{.kind = OpKind::kTanh, .inputs = {{.shape = {n}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const auto inputs = testing::MakeInputs(c);
  std::vector<std::vector<double>> dy = {std::vector<double>(n, 0.5)};
  auto run = testing::RunOp<double>(*g, inputs, &dy, KernelContext{.threads = 2});
  ASSERT_TRUE(run.ok()) << run.status();
  for (int64_t i = 0; i < n; i += 997) {
    const double y = std::tanh(inputs[0].reals[i]);
    EXPECT_NEAR(run->outputs[0][i], y, 1e-14);
    EXPECT_NEAR(run->grad_inputs[0][i], 0.5 * (1 - y * y), 1e-14);
  }
  EXPECT_NEAR(run->outputs[0][n - 1], std::tanh(inputs[0].reals[n - 1]), 1e-14);
}

// The backward reads only what docs/estimates.md says the op keeps: Neg keeps nothing, Exp Y.
TEST(ElementwiseUnaryTest, BackwardReadsOnlyWhatItKeeps) {
  graph::Node neg{.name = "neg", .kind = OpKind::kNeg, .inputs = {0}, .outputs = {1}};
  std::vector<double> dy = {1, -2}, dx(2), y = {std::exp(0.5), std::exp(-1.0)};
  std::vector<Tensor<double>> none = {{.shape = {2}}};
  std::vector<Tensor<double>> douts = {{.shape = {2}, .data = dy.data()}};
  std::vector<Tensor<double>> dins = {{.shape = {2}, .data = dx.data()}};
  OpState state;
  ASSERT_TRUE(Backward<double>(neg, none, none, douts, dins, {}, state).ok());
  EXPECT_EQ(dx, (std::vector<double>{-1, 2}));
  graph::Node exp{.name = "exp", .kind = OpKind::kExp, .inputs = {0}, .outputs = {1}};
  std::vector<Tensor<double>> outs = {{.shape = {2}, .data = y.data()}};
  ASSERT_TRUE(Backward<double>(exp, none, outs, douts, dins, {}, state).ok());
  EXPECT_NEAR(dx[0], y[0], 1e-15);
  EXPECT_NEAR(dx[1], -2 * y[1], 1e-15);
}

TEST(ElementwiseUnaryTest, ZeroOutputGradientGivesZeroInputGradient) {
  graph::Node node{.name = "sig", .kind = OpKind::kSigmoid, .inputs = {0}, .outputs = {1}};
  std::vector<double> x = {1, 2}, y = {0.7, 0.8}, dx = {5, 5};
  std::vector<Tensor<double>> ins = {{.shape = {2}, .data = x.data()}};
  std::vector<Tensor<double>> outs = {{.shape = {2}, .data = y.data()}};
  std::vector<Tensor<double>> douts = {{.shape = {2}}};
  std::vector<Tensor<double>> dins = {{.shape = {2}, .data = dx.data()}};
  OpState state;
  ASSERT_TRUE(Backward<double>(node, ins, outs, douts, dins, {}, state).ok());
  EXPECT_EQ(dx, (std::vector<double>{0, 0}));
}

TEST(ElementwiseUnaryTest, IntegerInputIsUnimplementedNamingTheNode) {
  OpCase c{.kind = OpKind::kExp,
           .inputs = {{.shape = {2}, .dtype = graph::DType::kI64, .values = {1, 2}}}};
  auto y = RunForwardF64(c);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(y.status().message().find("test_Exp"), std::string::npos) << y.status();
  EXPECT_NE(y.status().message().find("i64"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace tessera::exec::cpu
