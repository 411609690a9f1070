// The CPU kernel dispatcher and the test harness itself, on ReLU.
#include <gtest/gtest.h>

#include "tessera/exec/cpu/gemm.h"
#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::OpKind;
using testing::GradientCheck;
using testing::OpCase;

TEST(KernelsDispatchTest, ReluForwardIsMaxWithZero) {
  OpCase c{.kind = OpKind::kRelu, .inputs = {{.shape = {2, 2}, .values = {-1, 2, 0.5, -3}}}};
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], (std::vector<double>{0, 2, 0.5, 0}));
}

TEST(KernelsDispatchTest, ReluGradientCheck) {
  EXPECT_TRUE(GradientCheck({.kind = OpKind::kRelu, .inputs = {{.shape = {3, 5}}}}));
}

TEST(KernelsDispatchTest, ReluBackwardIsZeroOnNegativesAndDyOnPositives) {
  OpCase c{.kind = OpKind::kRelu, .inputs = {{.shape = {4}, .values = {-2, -1, 1, 2}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{10, 20, 30, 40}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 0, 30, 40}));
}

TEST(KernelsDispatchTest, EveryOpOfTheCatalogueHasACpuKernel) {
  for (graph::OpKind kind : graph::AllOpKinds()) {
    EXPECT_TRUE(HasCpuKernel(kind)) << graph::OpName(kind);
  }
}

TEST(KernelsDispatchTest, WrongArityIsInvalidArgument) {
  graph::Node node{.name = "r", .kind = OpKind::kRelu, .inputs = {0}, .outputs = {1}};
  std::vector<Tensor<float>> in(2), out(1);
  OpState state;
  absl::Status s = Forward<float>(node, in, out, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'r'"), std::string::npos);
}

TEST(GemmTest, MatchesNaiveProductWithTransposes) {
  const int64_t m = 3, n = 4, k = 5;
  std::vector<double> a(m * k), b(k * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = 0.1 * i - 0.7;
  for (int64_t i = 0; i < k * n; ++i) b[i] = 0.3 - 0.05 * i;
  // B stored transposed ([n, k]) and read with trans_b.
  std::vector<double> bt(n * k);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
  std::vector<double> c(m * n, 1.0);
  Gemm<double>(false, true, m, n, k, 2.0, a.data(), k, bt.data(), k, 0.5, c.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expect = 0.5;
      for (int64_t p = 0; p < k; ++p) expect += 2.0 * a[i * k + p] * b[p * n + j];
      EXPECT_NEAR(c[i * n + j], expect, 1e-12);
    }
}

}  // namespace
}  // namespace tessera::exec::cpu
