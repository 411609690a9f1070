// CPU kernels of Concat, Split and Gather.
#include <gtest/gtest.h>

#include <numeric>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::OpKind;
using graph::Shape;
using testing::GradientCheck;
using testing::OpCase;

std::vector<double> Iota(int64_t n, double from = 0) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(ConcatTest, JoinsAlongTheAxis) {
  // [2,2] (0..3) and [2,1] (100, 101) along axis 1 (given as -1).
  OpCase c{
      .kind = OpKind::kConcat,
      .attrs = graph::AxisAttrs{-1},
      .inputs = {{.shape = {2, 2}, .values = Iota(4)}, {.shape = {2, 1}, .values = {100, 101}}}};
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{0, 1, 100, 2, 3, 101}));
  c.attrs = graph::AxisAttrs{0};
  c.inputs[1] = {.shape = {1, 2}, .values = {100, 101}};
  y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{0, 1, 2, 3, 100, 101}));
}

TEST(ConcatTest, GradientCheckOnEachAxis) {
  for (int64_t axis = 0; axis < 3; ++axis) {
    Shape a = {2, 3, 4}, b = a, d = a;
    b[axis] = 1;
    d[axis] = 2;
    EXPECT_TRUE(GradientCheck({.kind = OpKind::kConcat,
                               .attrs = graph::AxisAttrs{axis},
                               .inputs = {{.shape = a}, {.shape = b}, {.shape = d}}}))
        << "axis " << axis;
  }
}

TEST(ConcatTest, IntegerTensorsKeepTheirValues) {
  OpCase c{.kind = OpKind::kConcat,
           .attrs = graph::AxisAttrs{0},
           .inputs = {{.shape = {2}, .dtype = DType::kI64, .values = {1, -2}},
                      {.shape = {1}, .dtype = DType::kI64, .values = {1LL << 35}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), nullptr);
  ASSERT_TRUE(run.ok()) << run.status();
  const auto* ints = reinterpret_cast<const int64_t*>(run->outputs[0].data());
  EXPECT_EQ(std::vector<int64_t>(ints, ints + 3), (std::vector<int64_t>{1, -2, 1LL << 35}));
}

TEST(SplitTest, CutsAlongTheAxisAndConcatenatesGradients) {
  OpCase c{.kind = OpKind::kSplit,
           .attrs = graph::SplitAttrs{.axis = 1, .sizes = {1, 0, 2}},
           .inputs = {{.shape = {2, 3}, .values = Iota(6)}},
           .num_outputs = 3};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  // Output 1 is empty (no elements, no gradient); dX interleaves dY_0 and dY_2 per row.
  const std::vector<std::vector<double>> dy = {{10, 20}, {}, {1, 2, 3, 4}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{0, 3}));
  EXPECT_TRUE(run->outputs[1].empty());
  EXPECT_EQ(run->outputs[2], (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{10, 1, 2, 20, 3, 4}));
}

TEST(SplitTest, ZeroGradientOutputLeavesZerosInItsSlab) {
  OpCase c{.kind = OpKind::kSplit,
           .attrs = graph::SplitAttrs{.axis = 0, .sizes = {1, 1}},
           .inputs = {{.shape = {2, 2}}},
           .num_outputs = 2};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{}, {7, 8}};  // output 0: zero gradient (nullptr)
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 0, 7, 8}));
}

TEST(SplitTest, GradientCheckOnEachAxis) {
  for (int64_t axis = -3; axis < 3; ++axis) {
    EXPECT_TRUE(GradientCheck({.kind = OpKind::kSplit,
                               .attrs = graph::SplitAttrs{.axis = axis, .sizes = {1, 1}},
                               .inputs = {{.shape = {2, 2, 2}}},
                               .num_outputs = 2}))
        << "axis " << axis;
  }
  EXPECT_TRUE(GradientCheck({.kind = OpKind::kSplit,
                             .attrs = graph::SplitAttrs{.axis = 1, .sizes = {2, 3, 1}},
                             .inputs = {{.shape = {3, 6, 2}}},
                             .num_outputs = 3}));
}

OpCase GatherCase(Shape data, int64_t axis, Shape indices_shape, std::vector<double> indices,
                  DType index_dtype = DType::kI64) {
  return OpCase{
      .kind = OpKind::kGather,
      .attrs = graph::AxisAttrs{axis},
      .inputs = {
          {.shape = std::move(data)},
          {.shape = std::move(indices_shape), .dtype = index_dtype, .values = std::move(indices)}}};
}

TEST(GatherTest, PicksAlongTheAxisWithNegativeIndices) {
  // data [2,3,2] = 0..11, axis 1, indices [[2,-3],[1,2]] -> [2, 2,2, 2].
  OpCase c = GatherCase({2, 3, 2}, 1, {2, 2}, {2, -3, 1, 2});
  c.inputs[0].values = Iota(12);
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> expect;
  const int64_t idx[] = {2, 0, 1, 2};
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t i = 0; i < 2; ++i) expect.push_back(static_cast<double>(o * 6 + idx[m] * 2 + i));
  EXPECT_EQ((*y)[0], expect);
}

TEST(GatherTest, BackwardScatterAddsRepeatedIndices) {
  OpCase c = GatherCase({3, 2}, 0, {3}, {2, 0, 2});
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 2, 10, 20, 100, 200}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{10, 20, 0, 0, 101, 202}));
}

TEST(GatherTest, GradientCheckOnEachAxis) {
  EXPECT_TRUE(GradientCheck(GatherCase({4, 3}, 0, {2, 3}, {3, 0, 3, 1, -1, 2})));
  EXPECT_TRUE(GradientCheck(GatherCase({2, 4, 3}, 1, {5}, {1, 1, 0, 3, -4}, DType::kI32)));
  EXPECT_TRUE(GradientCheck(GatherCase({2, 3, 4}, -1, {}, {2})));  // scalar index drops the axis
}

TEST(GatherTest, IndexOutOfRangeIsInvalidNamingNodeAndValue) {
  for (double bad : {3.0, -4.0}) {
    auto y = testing::RunForwardF64(GatherCase({3, 2}, 0, {2}, {0, bad}));
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(y.status().message().find("test_Gather"), std::string::npos) << y.status();
    EXPECT_NE(y.status().message().find(absl::StrCat("index ", bad)), std::string::npos)
        << y.status();
    EXPECT_NE(y.status().message().find("position 1"), std::string::npos) << y.status();
  }
}

}  // namespace
}  // namespace tessera::exec::cpu
