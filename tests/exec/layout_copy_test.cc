// CPU kernels of Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Expand.
#include <gtest/gtest.h>

#include <numeric>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::OpKind;
using graph::Shape;
using testing::GradientCheck;
using testing::OpCase;

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

// The multi-index of flat index i in `shape`.
std::vector<int64_t> Unflatten(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t Flatten(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + idx[d];
  return i;
}

TEST(LayoutCopyTest, ReshapeFamilyKeepsTheElementOrder) {
  const std::vector<OpCase> cases = {
      {.kind = OpKind::kIdentity, .inputs = {{.shape = {2, 3}}}},
      {.kind = OpKind::kReshape,
       .attrs = graph::ReshapeAttrs{{0, -1, 2}},
       .inputs = {{.shape = {2, 3, 4}}}},
      {.kind = OpKind::kFlatten, .attrs = graph::AxisAttrs{2}, .inputs = {{.shape = {2, 3, 4}}}},
      {.kind = OpKind::kFlatten, .attrs = graph::AxisAttrs{0}, .inputs = {{.shape = {2, 3}}}},
      {.kind = OpKind::kSqueeze, .attrs = graph::AxesAttrs{}, .inputs = {{.shape = {1, 3, 1, 2}}}},
      {.kind = OpKind::kSqueeze,
       .attrs = graph::AxesAttrs{{-2}},
       .inputs = {{.shape = {1, 3, 1, 2}}}},
      {.kind = OpKind::kUnsqueeze,
       .attrs = graph::AxesAttrs{{0, -1}},
       .inputs = {{.shape = {3, 2}}}},
  };
  const std::vector<Shape> expect_shapes = {{2, 3}, {2, 6, 2}, {6, 4},      {1, 6},
                                            {3, 2}, {1, 3, 2}, {1, 3, 2, 1}};
  for (size_t k = 0; k < cases.size(); ++k) {
    auto g = testing::BuildOpGraph(cases[k]);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->tensor(g->node(0).outputs[0]).shape, expect_shapes[k]) << k;
    auto y = testing::RunForwardF64(cases[k]);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0], testing::MakeInputs(cases[k])[0].reals) << graph::OpName(cases[k].kind);
    EXPECT_TRUE(GradientCheck(cases[k])) << graph::OpName(cases[k].kind) << " case " << k;
  }
}

TEST(LayoutCopyTest, ReshapeMovesIntegerTensorsInTheirOwnWidth) {
  OpCase c{
      .kind = OpKind::kReshape,
      .attrs = graph::ReshapeAttrs{{3, 2}},
      .inputs = {
          {.shape = {2, 3}, .dtype = graph::DType::kI64, .values = {5, -1, 7, 1LL << 40, 0, 2}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), nullptr);
  ASSERT_TRUE(run.ok()) << run.status();
  const auto* ints = reinterpret_cast<const int64_t*>(run->outputs[0].data());
  EXPECT_EQ(std::vector<int64_t>(ints, ints + 6),
            (std::vector<int64_t>{5, -1, 7, 1LL << 40, 0, 2}));
}

TEST(LayoutCopyTest, DtypeChangeIsInvalidNamingTheNode) {
  graph::Node node{.name = "reshape_ids",
                   .kind = OpKind::kReshape,
                   .inputs = {0},
                   .outputs = {1},
                   .attrs = graph::ReshapeAttrs{{2}}};
  std::vector<int64_t> in = {1, 2};
  std::vector<int32_t> out(2);
  std::vector<Tensor<float>> ins = {
      {.shape = {2}, .data = reinterpret_cast<float*>(in.data()), .dtype = graph::DType::kI64}};
  std::vector<Tensor<float>> outs = {
      {.shape = {2}, .data = reinterpret_cast<float*>(out.data()), .dtype = graph::DType::kI32}};
  OpState state;
  absl::Status s = Forward<float>(node, ins, outs, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("reshape_ids"), std::string::npos) << s;
}

void ExpectTransposeMatchesNaive(const Shape& in, const std::vector<int64_t>& perm,
                                 int threads = 2) {
  OpCase c{.kind = OpKind::kTranspose,
           .attrs = graph::PermAttrs{perm},
           .inputs = {{.shape = in, .values = Iota(testing::NumElements(in))}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const Shape out = g->tensor(g->node(0).outputs[0]).shape;
  std::vector<double> dy(testing::NumElements(out));
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = 0.5 * i;
  const std::vector<std::vector<double>> dys = {dy};
  auto run =
      testing::RunOp<double>(*g, testing::MakeInputs(c), &dys, KernelContext{.threads = threads});
  ASSERT_TRUE(run.ok()) << run.status();
  std::vector<int64_t> p = perm;
  if (p.empty())
    for (int64_t d = static_cast<int64_t>(in.size()) - 1; d >= 0; --d) p.push_back(d);
  for (int64_t i = 0; i < testing::NumElements(out); ++i) {
    const std::vector<int64_t> o = Unflatten(i, out);
    std::vector<int64_t> src(in.size());
    for (size_t d = 0; d < p.size(); ++d) src[p[d]] = o[d];
    const int64_t j = Flatten(src, in);
    ASSERT_EQ(run->outputs[0][i], static_cast<double>(j)) << graph::ShapeString(in) << " at " << i;
    ASSERT_EQ(run->grad_inputs[0][j], dy[i]) << graph::ShapeString(in) << " at " << i;
  }
}

TEST(LayoutCopyTest, TransposeMatchesNaivePermutation) {
  ExpectTransposeMatchesNaive({2, 3}, {1, 0});
  ExpectTransposeMatchesNaive({2, 3, 4}, {});
  ExpectTransposeMatchesNaive({2, 3, 4, 5}, {0, 2, 1, 3});
  ExpectTransposeMatchesNaive({2, 1, 4, 3}, {3, 0, 2, 1});
  ExpectTransposeMatchesNaive({64, 33, 40}, {2, 0, 1});  // tiled: the contiguous axes differ
  ExpectTransposeMatchesNaive({300, 257}, {1, 0});       // one tiled 2-D copy over two threads
}

TEST(LayoutCopyTest, TransposeGradientCheck) {
  EXPECT_TRUE(GradientCheck({.kind = OpKind::kTranspose,
                             .attrs = graph::PermAttrs{{1, 2, 0}},
                             .inputs = {{.shape = {2, 3, 4}}}}));
  EXPECT_TRUE(GradientCheck({.kind = OpKind::kTranspose, .inputs = {{.shape = {3, 5}}}}));
}

TEST(LayoutCopyTest, ExpandBroadcastsAndSumsTheGradientBack) {
  OpCase c{.kind = OpKind::kExpand,
           .attrs = graph::ExpandAttrs{{2, 3, 4}},
           .inputs = {{.shape = {3, 1}, .values = {1, 2, 3}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {Iota(24)};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(run->outputs[0][i], 1 + (i / 4) % 3) << i;
  // dX[r] = sum over b, k of dY[b, r, k] = sum of (12b + 4r + k).
  for (int64_t r = 0; r < 3; ++r) {
    double expect = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t k = 0; k < 4; ++k) expect += 12 * b + 4 * r + k;
    EXPECT_EQ(run->grad_inputs[0][r], expect);
  }
}

TEST(LayoutCopyTest, ExpandGradientCheck) {
  for (const auto& [in, to] : std::vector<std::pair<Shape, Shape>>{
           {{3, 1}, {2, 3, 4}}, {{}, {2, 2}}, {{1}, {5}}, {{2, 1, 3}, {1, 4, 1}}}) {
    EXPECT_TRUE(GradientCheck(
        {.kind = OpKind::kExpand, .attrs = graph::ExpandAttrs{to}, .inputs = {{.shape = in}}}))
        << graph::ShapeString(in) << " -> " << graph::ShapeString(to);
  }
}

// The backward of a layout op reads no input or output values (the harness passes them all;
// here they are absent).
TEST(LayoutCopyTest, BackwardReadsNoValues) {
  graph::Node node{.name = "t",
                   .kind = OpKind::kTranspose,
                   .inputs = {0},
                   .outputs = {1},
                   .attrs = graph::PermAttrs{}};
  std::vector<double> dy = {1, 2, 3, 4, 5, 6}, dx(6);
  std::vector<Tensor<double>> ins = {{.shape = {2, 3}}}, outs = {{.shape = {3, 2}}};
  std::vector<Tensor<double>> douts = {{.shape = {3, 2}, .data = dy.data()}};
  std::vector<Tensor<double>> dins = {{.shape = {2, 3}, .data = dx.data()}};
  OpState state;
  ASSERT_TRUE(Backward<double>(node, ins, outs, douts, dins, {}, state).ok());
  EXPECT_EQ(dx, (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(LayoutCopyTest, AttributesOfAnotherKindAreInvalidNamingTheNode) {
  graph::Node node{.name = "hand_made",
                   .kind = OpKind::kTranspose,
                   .inputs = {0},
                   .outputs = {1},
                   .attrs = graph::AxisAttrs{1}};
  std::vector<double> x = {1, 2}, y(2);
  std::vector<Tensor<double>> ins = {{.shape = {2}, .data = x.data()}};
  std::vector<Tensor<double>> outs = {{.shape = {2}, .data = y.data()}};
  OpState state;
  absl::Status s = Forward<double>(node, ins, outs, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("hand_made"), std::string::npos) << s;
  s = Backward<double>(node, ins, outs, outs, ins, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::exec::cpu
