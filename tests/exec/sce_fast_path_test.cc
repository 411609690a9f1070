// The CPU SoftmaxCrossEntropy's fast paths (float probabilities, vectorised exp, samples split
// over threads) at sizes where they switch on: loss and dlogits of the float and double kernels
// against a scalar double reference, with ignore_index and every reduction, and the same bits
// whatever the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::LossAttrs;
using graph::OpKind;
using graph::Reduction;
using graph::Shape;
using testing::OpCase;

struct Variant {
  std::string name;
  int64_t n, c, inner;  // logits [n, c] (inner 1) or [n, c, inner]
  Reduction reduction;
  int64_t ignore_index;
};

// Logits in [-30, 30] (exp overflows float without the max shift); labels random, every 7th
// position ignored when ignore_index >= 0.
OpCase MakeCase(const Variant& v) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> label(0, v.c - 1);
  std::vector<double> labels(v.n * v.inner);
  for (size_t p = 0; p < labels.size(); ++p) {
    labels[p] = static_cast<double>(label(rng));
    if (v.ignore_index >= 0 && p % 7 == 3) labels[p] = static_cast<double>(v.ignore_index);
  }
  const Shape logits = v.inner == 1 ? Shape{v.n, v.c} : Shape{v.n, v.c, v.inner};
  const Shape positions = v.inner == 1 ? Shape{v.n} : Shape{v.n, v.inner};
  return {.kind = OpKind::kSoftmaxCrossEntropy,
          .attrs = LossAttrs{.reduction = v.reduction, .ignore_index = v.ignore_index},
          .inputs = {{.shape = logits, .lo = -30, .hi = 30},
                     {.shape = positions, .dtype = DType::kI64, .values = labels}}};
}

// Rows of at least 32768 / C samples per thread: N = 300, C = 257 and N = 19, C*inner = 3500
// run on two threads.
std::vector<Variant> Variants() {
  return {
      {"rows_mean", 300, 257, 1, Reduction::kMean, -1},
      {"rows_mean_ignore", 300, 257, 1, Reduction::kMean, 5},
      {"rows_sum_ignore", 300, 257, 1, Reduction::kSum, 0},
      {"rows_none_ignore", 300, 257, 1, Reduction::kNone, 2},
      {"one_row_none", 1, 2000, 1, Reduction::kNone, -1},
      {"spatial_mean_ignore", 19, 50, 70, Reduction::kMean, 4},
      {"spatial_none", 19, 50, 70, Reduction::kNone, -1},
      {"spatial_sum_odd", 3, 7, 5, Reduction::kSum, 1},
  };
}

struct Expected {
  std::vector<double> loss;     // the output
  std::vector<double> dlogits;  // for the upstream gradient dy
};

// Per position logsumexp - logit[label] and (softmax - onehot) * scale, in double.
Expected Reference(const Variant& v, const std::vector<testing::Storage>& in,
                   const std::vector<double>& dy) {
  const std::vector<double>& x = in[0].reals;
  std::vector<double> loss(v.n * v.inner, 0.0), dl(x.size(), 0.0);
  double total = 0, count = 0;
  for (int64_t b = 0; b < v.n; ++b)
    for (int64_t s = 0; s < v.inner; ++s) {
      const int64_t pos = b * v.inner + s, label = in[1].ints[pos];
      if (v.ignore_index >= 0 && label == v.ignore_index) continue;
      const auto at = [&](int64_t j) { return (b * v.c + j) * v.inner + s; };
      double mx = -INFINITY, z = 0;
      for (int64_t j = 0; j < v.c; ++j) mx = std::max(mx, x[at(j)]);
      for (int64_t j = 0; j < v.c; ++j) z += std::exp(x[at(j)] - mx);
      loss[pos] = mx + std::log(z) - x[at(label)];
      total += loss[pos];
      count += 1;
    }
  for (int64_t b = 0; b < v.n; ++b)
    for (int64_t s = 0; s < v.inner; ++s) {
      const int64_t pos = b * v.inner + s, label = in[1].ints[pos];
      if (v.ignore_index >= 0 && label == v.ignore_index) continue;
      double g = v.reduction == Reduction::kNone ? dy[pos] : dy[0];
      if (v.reduction == Reduction::kMean) g /= count;
      const auto at = [&](int64_t j) { return (b * v.c + j) * v.inner + s; };
      const double lse = loss[pos] + x[at(label)];  // log sum_j exp(x_j)
      for (int64_t j = 0; j < v.c; ++j) dl[at(j)] = std::exp(x[at(j)] - lse) * g;
      dl[at(label)] -= g;
    }
  if (v.reduction == Reduction::kSum) return {{total}, dl};
  if (v.reduction == Reduction::kMean) return {{count > 0 ? total / count : 0.0}, dl};
  return {loss, dl};
}

template <typename T>
double MaxRelativeError(const std::vector<T>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t e = 0; e < std::min(a.size(), b.size()); ++e)
    worst = std::max(worst, std::abs(a[e] - b[e]) / std::max(1.0, std::abs(b[e])));
  return worst;
}

std::vector<std::vector<double>> Upstream(const Variant& v) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> dist(0.5, 2);
  std::vector<double> dy(v.reduction == Reduction::kNone ? v.n * v.inner : 1);
  for (double& value : dy) value = dist(rng);
  return {dy};
}

TEST(SoftmaxCrossEntropyFastPathTest, FloatAndDoubleMatchScalarReference) {
  for (const Variant& v : Variants()) {
    const OpCase c = MakeCase(v);
    auto g = testing::BuildOpGraph(c);
    ASSERT_TRUE(g.ok()) << g.status();
    const auto inputs = testing::MakeInputs(c);
    const auto dy = Upstream(v);
    const Expected want = Reference(v, inputs, dy[0]);
    auto f64 = testing::RunOp<double>(*g, inputs, &dy);
    auto f32 = testing::RunOp<float>(*g, inputs, &dy);
    ASSERT_TRUE(f64.ok() && f32.ok()) << v.name;
    EXPECT_LT(MaxRelativeError(f64->outputs[0], want.loss), 1e-12) << v.name;
    EXPECT_LT(MaxRelativeError(f64->grad_inputs[0], want.dlogits), 1e-12) << v.name;
    EXPECT_LT(MaxRelativeError(f32->outputs[0], want.loss), 1e-5) << v.name;
    EXPECT_LT(MaxRelativeError(f32->grad_inputs[0], want.dlogits), 1e-5) << v.name;
  }
}

TEST(SoftmaxCrossEntropyFastPathTest, IgnoredPositionsGetZeroGradient) {
  const Variant v{"rows_mean_ignore", 300, 257, 1, Reduction::kMean, 5};
  const OpCase c = MakeCase(v);
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const auto inputs = testing::MakeInputs(c);
  const auto dy = Upstream(v);
  auto f32 = testing::RunOp<float>(*g, inputs, &dy);
  ASSERT_TRUE(f32.ok()) << f32.status();
  int ignored = 0;
  for (int64_t b = 0; b < v.n; ++b) {
    if (inputs[1].ints[b] != v.ignore_index) continue;
    ++ignored;
    for (int64_t j = 0; j < v.c; ++j) ASSERT_EQ(f32->grad_inputs[0][b * v.c + j], 0.0f) << b;
  }
  EXPECT_GE(ignored, 40);
}

TEST(SoftmaxCrossEntropyFastPathTest, SameBitsWithOneOrTwoThreads) {
  for (const Variant& v : Variants()) {
    const OpCase c = MakeCase(v);
    auto g = testing::BuildOpGraph(c);
    ASSERT_TRUE(g.ok()) << g.status();
    const auto inputs = testing::MakeInputs(c);
    const auto dy = Upstream(v);
    auto one = testing::RunOp<float>(*g, inputs, &dy, KernelContext{.threads = 1});
    auto two = testing::RunOp<float>(*g, inputs, &dy, KernelContext{.threads = 2});
    ASSERT_TRUE(one.ok() && two.ok()) << v.name;
    EXPECT_EQ(one->outputs, two->outputs) << v.name;
    EXPECT_EQ(one->grad_inputs, two->grad_inputs) << v.name;
  }
}

TEST(SoftmaxCrossEntropyFastPathTest, BadLabelInLargeBatchNamesNodeLabelAndPosition) {
  Variant v{"bad", 300, 257, 1, Reduction::kMean, -1};
  OpCase c = MakeCase(v);
  c.inputs[1].values[211] = 257;
  auto y = testing::RunForwardF64(c);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("test_SoftmaxCrossEntropy"), std::string::npos);
  EXPECT_NE(y.status().message().find("label 257 at position 211"), std::string::npos)
      << y.status();
}

}  // namespace
}  // namespace tessera::exec::cpu
