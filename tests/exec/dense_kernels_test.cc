// CPU kernels of the dense family: Gemm, MatMul, Embedding.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::GemmAttrs;
using graph::OpKind;
using graph::Shape;
using testing::GradientCheck;
using testing::MakeInputs;
using testing::OpCase;
using testing::OpInput;

// ----- Gemm ----------------------------------------------------------------------------------

struct GemmVariant {
  bool trans_a, trans_b;
  Shape c;  // empty vector with has_c false: no C
  bool has_c;
};

OpCase GemmCase(const GemmVariant& v, int64_t m, int64_t n, int64_t k) {
  OpCase c{
      .kind = OpKind::kGemm,
      .attrs = GemmAttrs{.trans_a = v.trans_a, .trans_b = v.trans_b, .alpha = 0.7, .beta = -1.3}};
  c.inputs.push_back({.shape = v.trans_a ? Shape{k, m} : Shape{m, k}});
  c.inputs.push_back({.shape = v.trans_b ? Shape{n, k} : Shape{k, n}});
  if (v.has_c) c.inputs.push_back({.shape = v.c});
  return c;
}

const std::vector<GemmVariant>& GemmVariants() {
  static const auto* v = new std::vector<GemmVariant>{
      {false, false, {}, false},  {true, false, {4}, true}, {false, true, {3, 1}, true},
      {true, true, {3, 4}, true}, {false, true, {}, true},  {true, true, {1, 4}, true},
      {false, false, {1}, true}};
  return *v;
}

TEST(GemmKernelTest, ForwardMatchesNaiveLoopForEveryTransposeAndBias) {
  const int64_t m = 3, n = 4, k = 5;
  for (const GemmVariant& v : GemmVariants()) {
    OpCase c = GemmCase(v, m, n, k);
    auto in = MakeInputs(c);
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << y.status();
    const auto& A = in[0].reals;
    const auto& B = in[1].reals;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double av = v.trans_a ? A[p * m + i] : A[i * k + p];
          const double bv = v.trans_b ? B[j * k + p] : B[p * n + j];
          dot += av * bv;
        }
        double expect = 0.7 * dot;
        if (v.has_c) {
          // C indexed by broadcasting its (right-aligned) axes against [m, n].
          const Shape& cs = v.c;
          const int64_t ci = cs.size() == 2 ? (cs[0] == 1 ? 0 : i) : 0;
          const int64_t cj = cs.empty() ? 0 : (cs.back() == 1 ? 0 : j);
          const int64_t cols = cs.empty() ? 1 : cs.back();
          expect += -1.3 * in[2].reals[ci * cols + cj];
        }
        EXPECT_NEAR((*y)[0][i * n + j], expect, 1e-12)
            << "trans_a=" << v.trans_a << " trans_b=" << v.trans_b << " at " << i << "," << j;
      }
  }
}

TEST(GemmKernelTest, GradientCheckEveryTransposeAndBiasBroadcast) {
  for (const GemmVariant& v : GemmVariants()) {
    EXPECT_TRUE(GradientCheck(GemmCase(v, 3, 4, 5)))
        << "trans_a=" << v.trans_a << " trans_b=" << v.trans_b << " C " << graph::ShapeString(v.c);
  }
}

TEST(GemmKernelTest, LinearLayoutHandValues) {
  // Linear: x [1,2] times W [3,2] transposed plus b [3].
  OpCase c{.kind = OpKind::kGemm,
           .attrs = GemmAttrs{.trans_b = true},
           .inputs = {{.shape = {1, 2}, .values = {1, 2}},
                      {.shape = {3, 2}, .values = {1, 0, 0, 1, 1, 1}},
                      {.shape = {3}, .values = {10, 20, 30}}}};
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{11, 22, 33}));
}

// ----- MatMul --------------------------------------------------------------------------------

// Independent numpy-matmul reference: promotes 1-D operands, broadcasts batch axes.
std::vector<double> NaiveMatMul(Shape a, Shape b, const std::vector<double>& av,
                                const std::vector<double>& bv) {
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  while (a.size() < b.size()) a.insert(a.begin(), 1);
  while (b.size() < a.size()) b.insert(b.begin(), 1);
  const size_t r = a.size();
  const int64_t m = a[r - 2], k = a[r - 1], n = b[r - 1];
  Shape batch(r - 2);
  for (size_t i = 0; i + 2 < r; ++i) batch[i] = std::max(a[i], b[i]);
  std::vector<double> y;
  std::vector<int64_t> idx(r - 2, 0);
  const int64_t nb = testing::NumElements(batch);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t rem = bi;
    for (size_t i = r - 2; i-- > 0;) {
      idx[i] = rem % batch[i];
      rem /= batch[i];
    }
    int64_t ao = 0, bo = 0;
    for (size_t i = 0; i + 2 < r; ++i) {
      ao = ao * a[i] + (a[i] == 1 ? 0 : idx[i]);
      bo = bo * b[i] + (b[i] == 1 ? 0 : idx[i]);
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += av[ao * m * k + i * k + p] * bv[bo * k * n + p * n + j];
        y.push_back(s);
      }
  }
  return y;
}

const std::vector<std::pair<Shape, Shape>>& MatMulShapes() {
  static const auto* v = new std::vector<std::pair<Shape, Shape>>{
      {{3, 4}, {4, 5}},          {{2, 3, 4}, {4, 5}},    {{3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {3, 4, 2}}, {{2, 3, 4}, {2, 4, 2}}, {{4}, {4}},
      {{4}, {2, 4, 3}},          {{2, 3, 4}, {4}},       {{1, 3, 4}, {2, 4, 2}}};
  return *v;
}

TEST(MatMulKernelTest, ForwardMatchesNaiveBroadcastingReference) {
  for (const auto& [sa, sb] : MatMulShapes()) {
    OpCase c{.kind = OpKind::kMatMul, .inputs = {{.shape = sa}, {.shape = sb}}};
    auto in = MakeInputs(c);
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<double> expect = NaiveMatMul(sa, sb, in[0].reals, in[1].reals);
    ASSERT_EQ((*y)[0].size(), expect.size()) << graph::ShapeString(sa) << graph::ShapeString(sb);
    for (size_t i = 0; i < expect.size(); ++i)
      EXPECT_NEAR((*y)[0][i], expect[i], 1e-12)
          << graph::ShapeString(sa) << "x" << graph::ShapeString(sb) << " at " << i;
  }
}

TEST(MatMulKernelTest, GradientCheckBroadcastAndVectorOperands) {
  for (const auto& [sa, sb] : MatMulShapes()) {
    EXPECT_TRUE(GradientCheck({.kind = OpKind::kMatMul, .inputs = {{.shape = sa}, {.shape = sb}}}))
        << graph::ShapeString(sa) << " x " << graph::ShapeString(sb);
  }
}

// ----- Embedding -----------------------------------------------------------------------------

TEST(EmbeddingKernelTest, ForwardGathersRowsAndBackwardScatterAdds) {
  OpCase c{.kind = OpKind::kEmbedding,
           .inputs = {{.shape = {3}, .dtype = DType::kI64, .values = {2, 0, 2}},
                      {.shape = {3, 2}, .values = {1, 2, 3, 4, 5, 6}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 10, 100, 1000, 7, 70}};
  auto run = testing::RunOp<double>(*g, MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{5, 6, 1, 2, 5, 6}));
  // Row 0 from position 1; row 1 unused; row 2 from positions 0 and 2.
  EXPECT_EQ(run->grad_inputs[1], (std::vector<double>{100, 1000, 0, 0, 8, 80}));
}

TEST(EmbeddingKernelTest, GradientCheckWithRepeatedIdsIn2D) {
  EXPECT_TRUE(GradientCheck(
      {.kind = OpKind::kEmbedding,
       .inputs = {{.shape = {2, 3}, .dtype = DType::kI32, .values = {1, 4, 1, 0, 4, 4}},
                  {.shape = {5, 3}}}}));
}

TEST(EmbeddingKernelTest, IdOutOfRangeIsInvalidArgumentNamingNodeAndId) {
  for (double bad : {5.0, -1.0}) {
    OpCase c{
        .kind = OpKind::kEmbedding,
        .inputs = {{.shape = {2}, .dtype = DType::kI64, .values = {1, bad}}, {.shape = {5, 3}}}};
    auto y = testing::RunForwardF64(c);
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(y.status().message().find("test_Embedding"), std::string::npos) << y.status();
    EXPECT_NE(y.status().message().find(absl::StrCat("id ", static_cast<int>(bad))),
              std::string::npos)
        << y.status();
  }
}

}  // namespace
}  // namespace tessera::exec::cpu
