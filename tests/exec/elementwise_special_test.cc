// CPU kernels of Dropout, Cast and Where.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::OpKind;
using graph::ScalarAttrs;
using testing::GradientCheck;
using testing::OpCase;

OpCase DropoutCase(double ratio, graph::Shape shape) {
  return OpCase{.kind = OpKind::kDropout,
                .attrs = ScalarAttrs{.alpha = ratio},
                .inputs = {{.shape = std::move(shape), .lo = 0.5, .hi = 1.5}}};
}

absl::StatusOr<testing::Run<double>> RunDropout(const OpCase& c, const KernelContext& ctx) {
  auto g = testing::BuildOpGraph(c);
  if (!g.ok()) return g.status();
  const int64_t n = testing::NumElements(c.inputs[0].shape);
  std::vector<std::vector<double>> dy = {std::vector<double>(n, 2.0)};
  return testing::RunOp<double>(*g, testing::MakeInputs(c), &dy, ctx);
}

TEST(DropoutTest, TrainingZeroesAboutRatioAndScalesTheRest) {
  const OpCase c = DropoutCase(0.3, {100000});
  auto run = RunDropout(c, KernelContext{.seed = 42, .step = 7});
  ASSERT_TRUE(run.ok()) << run.status();
  const std::vector<double> x = testing::MakeInputs(c)[0].reals;
  int64_t kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double y = run->outputs[0][i];
    if (y == 0) {
      EXPECT_EQ(run->grad_inputs[0][i], 0);
    } else {
      ++kept;
      EXPECT_NEAR(y, x[i] / 0.7, 1e-12);
      EXPECT_NEAR(run->grad_inputs[0][i], 2.0 / 0.7, 1e-12);  // dY = 2 through the same mask
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / x.size(), 0.7, 0.01);
}

TEST(DropoutTest, MaskDependsOnSeedAndStepOnly) {
  const OpCase c = DropoutCase(0.5, {100000});  // enough words for two threads
  auto a = RunDropout(c, KernelContext{.seed = 1, .step = 3});
  auto b = RunDropout(c, KernelContext{.threads = 1, .seed = 1, .step = 3});
  auto other_step = RunDropout(c, KernelContext{.seed = 1, .step = 4});
  auto other_seed = RunDropout(c, KernelContext{.seed = 2, .step = 3});
  ASSERT_TRUE(a.ok() && b.ok() && other_step.ok() && other_seed.ok());
  EXPECT_EQ(a->outputs[0], b->outputs[0]);
  EXPECT_NE(a->outputs[0], other_step->outputs[0]);
  EXPECT_NE(a->outputs[0], other_seed->outputs[0]);
}

TEST(DropoutTest, IdentityWhenNotTraining) {
  const OpCase c = DropoutCase(0.5, {3, 4});
  auto run = RunDropout(c, KernelContext{.training = false});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], testing::MakeInputs(c)[0].reals);
  EXPECT_EQ(run->grad_inputs[0], std::vector<double>(12, 2.0));
}

TEST(DropoutTest, GradientCheck) {
  EXPECT_TRUE(GradientCheck(DropoutCase(0.4, {5, 13})));
  EXPECT_TRUE(GradientCheck(DropoutCase(0.0, {7})));
}

TEST(DropoutTest, RatioOutsideZeroOneIsInvalidNamingTheNode) {
  for (double ratio : {1.0, -0.1}) {
    auto run = RunDropout(DropoutCase(ratio, {4}), KernelContext{});
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(run.status().message().find("test_Dropout"), std::string::npos) << run.status();
  }
}

OpCase CastCase(DType from, DType to, std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return OpCase{.kind = OpKind::kCast,
                .attrs = graph::CastAttrs{.to = to},
                .inputs = {{.shape = {n}, .dtype = from, .values = std::move(values)}}};
}

// Element i of an integer output stored in the harness's double buffer.
template <typename I>
I IntAt(const std::vector<double>& out, int64_t i) {
  I v;
  std::memcpy(&v, reinterpret_cast<const char*>(out.data()) + i * sizeof(I), sizeof(I));
  return v;
}

TEST(CastTest, FloatingToFloatingIsAnIdentityWithGradient) {
  EXPECT_TRUE(GradientCheck(CastCase(DType::kF32, DType::kF16, {0.25, -1.5, 3})));
  EXPECT_TRUE(GradientCheck(CastCase(DType::kF16, DType::kF32, {0.25, -1.5, 3})));
  auto y = testing::RunForwardF64(CastCase(DType::kF32, DType::kBF16, {0.25, -1.5}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{0.25, -1.5}));
}

TEST(CastTest, FloatingToIntegerTruncatesTowardZero) {
  const std::vector<double> x = {1.7, -1.7, 2.0, -0.2};
  auto to32 = testing::RunForwardF64(CastCase(DType::kF32, DType::kI32, x));
  auto to64 = testing::RunForwardF64(CastCase(DType::kF32, DType::kI64, x));
  ASSERT_TRUE(to32.ok() && to64.ok());
  const std::vector<int64_t> expect = {1, -1, 2, 0};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(IntAt<int32_t>((*to32)[0], i), expect[i]);
    EXPECT_EQ(IntAt<int64_t>((*to64)[0], i), expect[i]);
  }
}

TEST(CastTest, IntegerAndBoolConversions) {
  auto to_float = testing::RunForwardF64(CastCase(DType::kI64, DType::kF32, {3, -4, 0}));
  ASSERT_TRUE(to_float.ok()) << to_float.status();
  EXPECT_EQ((*to_float)[0], (std::vector<double>{3, -4, 0}));
  auto to_bool = testing::RunForwardF64(CastCase(DType::kF32, DType::kBool, {0.5, 0, -2}));
  ASSERT_TRUE(to_bool.ok()) << to_bool.status();
  EXPECT_EQ((*to_bool)[0], (std::vector<double>{1, 0, 1}));
  auto narrow = testing::RunForwardF64(CastCase(DType::kI64, DType::kI32, {7, -9}));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_EQ(IntAt<int32_t>((*narrow)[0], 0), 7);
  EXPECT_EQ(IntAt<int32_t>((*narrow)[0], 1), -9);
}

TEST(CastTest, NoGradientFlowsThroughAnIntegerOutput) {
  const OpCase c = CastCase(DType::kF32, DType::kI64, {1.5, 2.5});
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 1}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 0}));
}

TEST(CastTest, ValueOutOfTheTargetRangeIsInvalidNamingNodeAndElement) {
  for (double bad : {3e9, std::nan("")}) {
    auto y = testing::RunForwardF64(CastCase(DType::kF32, DType::kI32, {1, bad}));
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(y.status().message().find("test_Cast"), std::string::npos) << y.status();
    EXPECT_NE(y.status().message().find("element 1"), std::string::npos) << y.status();
  }
}

OpCase WhereCase(graph::Shape cond, std::vector<double> cond_values, graph::Shape x,
                 graph::Shape y) {
  return OpCase{
      .kind = OpKind::kWhere,
      .inputs = {
          {.shape = std::move(cond), .dtype = DType::kBool, .values = std::move(cond_values)},
          {.shape = std::move(x)},
          {.shape = std::move(y)}}};
}

TEST(WhereTest, ForwardSelectsWithBroadcasting) {
  // cond [2,1], X [2,3], Y [3] -> [2,3]: row 0 from X, row 1 from Y.
  OpCase c = WhereCase({2, 1}, {1, 0}, {2, 3}, {3});
  c.inputs[1].values = {1, 2, 3, 4, 5, 6};
  c.inputs[2].values = {-1, -2, -3};
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{1, 2, 3, -1, -2, -3}));
}

TEST(WhereTest, BackwardRoutesAndSumsTheGradient) {
  OpCase c = WhereCase({2, 1}, {1, 0}, {2, 3}, {3});
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 2, 3, 4, 5, 6}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[1], (std::vector<double>{1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(run->grad_inputs[2], (std::vector<double>{4, 5, 6}));
}

TEST(WhereTest, GradientCheckOverBroadcastPatterns) {
  EXPECT_TRUE(GradientCheck(WhereCase({2, 3}, {1, 0, 0, 1, 1, 0}, {2, 3}, {2, 3})));
  EXPECT_TRUE(GradientCheck(WhereCase({3}, {0, 1, 1}, {2, 1}, {})));
  EXPECT_TRUE(GradientCheck(WhereCase({2, 1, 4}, {1, 0, 1, 1, 0, 0, 1, 0}, {3, 1}, {1, 3, 4})));
}

TEST(WhereTest, IntegerValuesAreUnimplementedNamingTheNode) {
  OpCase c = WhereCase({2}, {1, 0}, {2}, {2});
  c.inputs[1].dtype = c.inputs[2].dtype = DType::kI64;
  c.inputs[1].values = {1, 2};
  c.inputs[2].values = {3, 4};
  auto y = testing::RunForwardF64(c);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(y.status().message().find("test_Where"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace tessera::exec::cpu
