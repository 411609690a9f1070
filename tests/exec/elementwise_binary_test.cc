// CPU kernels of Add, Sub, Mul, Div, Pow: forward against a naive broadcasting loop, gradient
// checks on every broadcasting pattern, the reduction of broadcast gradients, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::OpKind;
using graph::Shape;
using testing::GradientCheck;
using testing::OpCase;

struct BinaryOp {
  OpKind kind;
  std::function<double(double, double)> f;
  double a_lo = -1, a_hi = 1, b_lo = -1, b_hi = 1;
};

std::vector<BinaryOp> Ops() {
  return {
      {OpKind::kAdd, [](double a, double b) { return a + b; }},
      {OpKind::kSub, [](double a, double b) { return a - b; }},
      {OpKind::kMul, [](double a, double b) { return a * b; }},
      {OpKind::kDiv, [](double a, double b) { return a / b; }, -1, 1, 0.5, 2},
      {OpKind::kPow, [](double a, double b) { return std::pow(a, b); }, 0.5, 2, -1.5, 1.5},
  };
}

// Broadcasting patterns: same shape, trailing vector, both sides broadcast, scalar, rank-0.
std::vector<std::pair<Shape, Shape>> Patterns() {
  return {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{4, 1, 3}, {2, 1}},         {{3, 1}, {1, 4}},
          {{2, 3, 4}, {}},  {{}, {2, 2}},  {{2, 1, 3, 1}, {1, 4, 1, 2}}};
}

OpCase MakeCase(const BinaryOp& op, const Shape& a, const Shape& b, uint32_t seed = 3) {
  return OpCase{.kind = op.kind,
                .inputs = {{.shape = a, .lo = op.a_lo, .hi = op.a_hi},
                           {.shape = b, .lo = op.b_lo, .hi = op.b_hi}},
                .seed = seed};
}

// out[i] = f(a[broadcast i], b[broadcast i]) by explicit multi-index arithmetic.
std::vector<double> NaiveBroadcast(const std::function<double(double, double)>& f,
                                   const std::vector<double>& a, const Shape& sa,
                                   const std::vector<double>& b, const Shape& sb,
                                   const Shape& out) {
  const auto offset = [&](const Shape& s, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    const size_t shift = out.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + (s[d] == 1 ? 0 : idx[d + shift]);
    return off;
  };
  std::vector<double> y;
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t i = 0; i < testing::NumElements(out); ++i) {
    int64_t rest = i;
    for (size_t d = out.size(); d-- > 0;) {
      idx[d] = rest % out[d];
      rest /= out[d];
    }
    y.push_back(f(a[offset(sa, idx)], b[offset(sb, idx)]));
  }
  return y;
}

TEST(ElementwiseBinaryTest, ForwardMatchesNaiveBroadcasting) {
  for (const BinaryOp& op : Ops()) {
    for (const auto& [sa, sb] : Patterns()) {
      const OpCase c = MakeCase(op, sa, sb);
      auto g = testing::BuildOpGraph(c);
      ASSERT_TRUE(g.ok()) << g.status();
      const Shape out = g->tensor(g->node(0).outputs[0]).shape;
      const auto in = testing::MakeInputs(c);
      auto y = testing::RunForwardF64(c);
      ASSERT_TRUE(y.ok()) << y.status();
      const std::vector<double> expect =
          NaiveBroadcast(op.f, in[0].reals, sa, in[1].reals, sb, out);
      ASSERT_EQ((*y)[0].size(), expect.size());
      for (size_t i = 0; i < expect.size(); ++i) {
        EXPECT_NEAR((*y)[0][i], expect[i], 1e-14)
            << graph::OpName(op.kind) << " " << graph::ShapeString(sa) << " , "
            << graph::ShapeString(sb) << " at " << i;
      }
    }
  }
}

TEST(ElementwiseBinaryTest, GradientCheckEveryOpAndBroadcastPattern) {
  for (const BinaryOp& op : Ops()) {
    for (const auto& [sa, sb] : Patterns()) {
      EXPECT_TRUE(GradientCheck(MakeCase(op, sa, sb)))
          << graph::OpName(op.kind) << " " << graph::ShapeString(sa) << " , "
          << graph::ShapeString(sb);
    }
  }
}

// Add of [2,3] and [3]: dB is the column sum of dY.
TEST(ElementwiseBinaryTest, BroadcastGradientIsSummedOverTheBroadcastAxes) {
  OpCase c{.kind = OpKind::kAdd, .inputs = {{.shape = {2, 3}}, {.shape = {3}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 2, 3, 10, 20, 30}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], dy[0]);
  EXPECT_EQ(run->grad_inputs[1], (std::vector<double>{11, 22, 33}));
}

TEST(ElementwiseBinaryTest, PowGradientOfTheExponentIsZeroForNonPositiveBase) {
  OpCase c{.kind = OpKind::kPow,
           .inputs = {{.shape = {3}, .values = {0, -2, 3}}, {.shape = {3}, .values = {2, 2, 2}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 1, 1}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{0, 4, 9}));
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, -4, 6}));  // 2 * a
  EXPECT_EQ(run->grad_inputs[1][0], 0);
  EXPECT_EQ(run->grad_inputs[1][1], 0);
  EXPECT_NEAR(run->grad_inputs[1][2], 9 * std::log(3.0), 1e-14);
}

// Add keeps nothing and Mul only the other operand: the backward must not read the rest.
TEST(ElementwiseBinaryTest, BackwardReadsOnlyWhatItKeeps) {
  std::vector<double> a = {1, 2, 3, 4}, b = {5, 6}, dy = {1, 1, 1, 1}, da(4), db(2);
  const Shape sa = {2, 2}, sb = {2};
  std::vector<Tensor<double>> douts = {{.shape = sa, .data = dy.data()}};
  std::vector<Tensor<double>> dins = {{.shape = sa, .data = da.data()},
                                      {.shape = sb, .data = db.data()}};
  std::vector<Tensor<double>> outs = {{.shape = sa}};
  OpState state;
  graph::Node add{.name = "add", .kind = OpKind::kAdd, .inputs = {0, 1}, .outputs = {2}};
  std::vector<Tensor<double>> none = {{.shape = sa}, {.shape = sb}};
  ASSERT_TRUE(Backward<double>(add, none, outs, douts, dins, {}, state).ok());
  EXPECT_EQ(db, (std::vector<double>{2, 2}));
  graph::Node mul{.name = "mul", .kind = OpKind::kMul, .inputs = {0, 1}, .outputs = {2}};
  std::vector<Tensor<double>> only_b = {{.shape = sa}, {.shape = sb, .data = b.data()}};
  std::vector<Tensor<double>> only_da = {{.shape = sa, .data = da.data()}, {.shape = sb}};
  ASSERT_TRUE(Backward<double>(mul, only_b, outs, douts, only_da, {}, state).ok());
  EXPECT_EQ(da, (std::vector<double>{5, 6, 5, 6}));
}

// Large operands go through the thread pool, flat and broadcast.
TEST(ElementwiseBinaryTest, LargeBroadcastsSplitOverThreadsGiveTheSameValues) {
  for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{300, 257}, {300, 257}}, {{300, 257}, {257}}, {{300, 1}, {300, 257}}}) {
    OpCase c{.kind = OpKind::kMul, .inputs = {{.shape = sa}, {.shape = sb}}};
    auto g = testing::BuildOpGraph(c);
    ASSERT_TRUE(g.ok()) << g.status();
    const Shape out = {300, 257};
    const auto in = testing::MakeInputs(c);
    std::vector<std::vector<double>> dy = {std::vector<double>(300 * 257, 1.0)};
    auto run = testing::RunOp<double>(*g, in, &dy, KernelContext{.threads = 2});
    ASSERT_TRUE(run.ok()) << run.status();
    const auto mul = [](double x, double y) { return x * y; };
    EXPECT_EQ(run->outputs[0], NaiveBroadcast(mul, in[0].reals, sa, in[1].reals, sb, out));
    // dA = B broadcast (summed where A was broadcast).
    const auto second = [](double, double y) { return y; };
    std::vector<double> expect_da(in[0].reals.size(), 0.0);
    const std::vector<double> b_full =
        NaiveBroadcast(second, in[0].reals, sa, in[1].reals, sb, out);
    for (int64_t i = 0; i < 300 * 257; ++i) expect_da[sa[1] == 1 ? i / 257 : i] += b_full[i];
    for (size_t i = 0; i < expect_da.size(); ++i) {
      ASSERT_NEAR(run->grad_inputs[0][i], expect_da[i], 1e-10) << i;
    }
  }
}

TEST(ElementwiseBinaryTest, IntegerOperandsAreUnimplementedNamingTheNode) {
  OpCase c{.kind = OpKind::kAdd,
           .inputs = {{.shape = {2}, .dtype = graph::DType::kI64, .values = {1, 2}},
                      {.shape = {2}, .dtype = graph::DType::kI64, .values = {3, 4}}}};
  auto y = testing::RunForwardF64(c);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(y.status().message().find("test_Add"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace tessera::exec::cpu
