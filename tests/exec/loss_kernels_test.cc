// CPU kernels of the loss family: SoftmaxCrossEntropy and CtcLoss (against a
// brute-force sum over every alignment).
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::LossAttrs;
using graph::OpKind;
using graph::Reduction;
using graph::Shape;
using testing::GradientCheck;
using testing::MakeInputs;
using testing::OpCase;

// ----- SoftmaxCrossEntropy -------------------------------------------------------------------

TEST(SoftmaxCrossEntropyKernelTest, HandValuesForEveryReduction) {
  const double l0 = std::log(3.0);
  const double l1 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  const std::vector<std::pair<Reduction, std::vector<double>>> cases = {
      {Reduction::kNone, {l0, l1}},
      {Reduction::kSum, {l0 + l1}},
      {Reduction::kMean, {(l0 + l1) / 2}}};
  for (const auto& [reduction, expect] : cases) {
    OpCase c{.kind = OpKind::kSoftmaxCrossEntropy,
             .attrs = LossAttrs{.reduction = reduction},
             .inputs = {{.shape = {2, 3}, .values = {0, 0, 0, 1, 2, 3}},
                        {.shape = {2}, .dtype = DType::kI64, .values = {0, 2}}}};
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ((*y)[0].size(), expect.size());
    for (size_t i = 0; i < expect.size(); ++i) EXPECT_NEAR((*y)[0][i], expect[i], 1e-12);
  }
}

OpCase SpatialCrossEntropy(Reduction reduction, int64_t ignore_index) {
  // logits [2, 4, 3], labels [2, 3]; label 1 appears twice (ignored when ignore_index = 1).
  return {.kind = OpKind::kSoftmaxCrossEntropy,
          .attrs = LossAttrs{.reduction = reduction, .ignore_index = ignore_index},
          .inputs = {{.shape = {2, 4, 3}, .lo = -2, .hi = 2},
                     {.shape = {2, 3}, .dtype = DType::kI32, .values = {3, 1, 0, 2, 1, 3}}}};
}

TEST(SoftmaxCrossEntropyKernelTest, SpatialMeanSkipsIgnoredPositions) {
  OpCase c = SpatialCrossEntropy(Reduction::kMean, 1);
  auto in = MakeInputs(c);
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  double total = 0;
  int counted = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t s = 0; s < 3; ++s) {
      const int64_t label = in[1].ints[n * 3 + s];
      if (label == 1) continue;
      double z = 0;
      for (int64_t k = 0; k < 4; ++k) z += std::exp(in[0].reals[(n * 4 + k) * 3 + s]);
      total += std::log(z) - in[0].reals[(n * 4 + label) * 3 + s];
      ++counted;
    }
  ASSERT_EQ(counted, 4);
  EXPECT_NEAR((*y)[0][0], total / counted, 1e-12);
}

TEST(SoftmaxCrossEntropyKernelTest, GradientCheckReductionsAndIgnoreIndex) {
  for (Reduction r : {Reduction::kNone, Reduction::kSum, Reduction::kMean})
    for (int64_t ignore : {-1, 1}) {
      EXPECT_TRUE(GradientCheck(SpatialCrossEntropy(r, ignore)))
          << "reduction " << static_cast<int>(r) << " ignore " << ignore;
    }
  EXPECT_TRUE(
      GradientCheck({.kind = OpKind::kSoftmaxCrossEntropy,
                     .inputs = {{.shape = {3, 5}, .lo = -3, .hi = 3},
                                {.shape = {3}, .dtype = DType::kI64, .values = {4, 0, 2}}}}));
}

TEST(SoftmaxCrossEntropyKernelTest, AllIgnoredMeanIsZero) {
  OpCase c{.kind = OpKind::kSoftmaxCrossEntropy,
           .attrs = LossAttrs{.ignore_index = 0},
           .inputs = {{.shape = {2, 3}}, {.shape = {2}, .dtype = DType::kI64, .values = {0, 0}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok());
  const std::vector<std::vector<double>> dy = {{1.0}};
  auto run = testing::RunOp<double>(*g, MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0][0], 0.0);
  EXPECT_EQ(run->grad_inputs[0], std::vector<double>(6, 0.0));
}

TEST(SoftmaxCrossEntropyKernelTest, LabelOutOfRangeIsInvalidArgumentNamingNodeAndLabel) {
  OpCase c{.kind = OpKind::kSoftmaxCrossEntropy,
           .inputs = {{.shape = {2, 3}}, {.shape = {2}, .dtype = DType::kI64, .values = {1, 7}}}};
  auto y = testing::RunForwardF64(c);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("test_SoftmaxCrossEntropy"), std::string::npos);
  EXPECT_NE(y.status().message().find("label 7"), std::string::npos) << y.status();
}

// ----- CtcLoss -------------------------------------------------------------------------------

// -log of the total probability of the alignments of sample n's first `frames` frames that collapse
// to `target`, by enumerating all C^frames paths.
double BruteForceCtc(const std::vector<double>& lp, int64_t n_total, int64_t n, int64_t classes,
                     int64_t frames, const std::vector<int64_t>& target, int64_t blank) {
  int64_t paths = 1;
  for (int64_t t = 0; t < frames; ++t) paths *= classes;
  double total = 0;
  for (int64_t code = 0; code < paths; ++code) {
    std::vector<int64_t> path(frames);
    int64_t rem = code;
    for (int64_t t = 0; t < frames; ++t) {
      path[t] = rem % classes;
      rem /= classes;
    }
    std::vector<int64_t> collapsed;
    for (int64_t t = 0; t < frames; ++t) {
      if (path[t] == blank) continue;
      if (t > 0 && path[t] == path[t - 1]) continue;
      collapsed.push_back(path[t]);
    }
    if (collapsed != target) continue;
    double logp = 0;
    for (int64_t t = 0; t < frames; ++t) logp += lp[(t * n_total + n) * classes + path[t]];
    total += std::exp(logp);
  }
  return -std::log(total);
}

// log_probs [5, 3, 4] (log-softmax of random scores), targets [3, 2].
OpCase CtcCase(Reduction reduction, int64_t blank, std::vector<double> targets,
               std::vector<double> input_lengths, std::vector<double> target_lengths) {
  const int64_t t = 5, n = 3, c = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<double> lp(t * n * c);
  for (int64_t row = 0; row < t * n; ++row) {
    double z = 0;
    for (int64_t k = 0; k < c; ++k) z += std::exp(lp[row * c + k] = dist(rng));
    for (int64_t k = 0; k < c; ++k) lp[row * c + k] -= std::log(z);
  }
  return {.kind = OpKind::kCtcLoss,
          .attrs = LossAttrs{.reduction = reduction, .blank = blank},
          .inputs = {{.shape = {t, n, c}, .values = lp},
                     {.shape = {n, 2}, .dtype = DType::kI64, .values = std::move(targets)},
                     {.shape = {n}, .dtype = DType::kI64, .values = std::move(input_lengths)},
                     {.shape = {n}, .dtype = DType::kI32, .values = std::move(target_lengths)}}};
}

TEST(CtcLossKernelTest, MatchesBruteForceEnumerationOfAlignments) {
  // Sample 0: "1 2" in 5 frames; sample 1: "1 1" (needs a blank between) in 4; sample 2: "3" in 3
  // (targets beyond target_length are padding and ignored).
  for (int64_t blank : {0, 2}) {
    const double two = blank == 2 ? 0 : 2;  // a non-blank label other than 1 and 3
    OpCase c = CtcCase(Reduction::kNone, blank, {1, two, 1, 1, 3, 1}, {5, 4, 3}, {2, 2, 1});
    auto in = MakeInputs(c);
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<std::vector<int64_t>> targets = {{1, static_cast<int64_t>(two)}, {1, 1}, {3}};
    const std::vector<int64_t> frames = {5, 4, 3};
    std::vector<double> expect;
    for (int64_t n = 0; n < 3; ++n) {
      expect.push_back(BruteForceCtc(in[0].reals, 3, n, 4, frames[n], targets[n], blank));
      EXPECT_NEAR((*y)[0][n], expect[n], 1e-10) << "sample " << n << " blank " << blank;
    }
    // mean: PyTorch's convention, each loss over its target length, then over the batch.
    c.attrs = LossAttrs{.reduction = Reduction::kMean, .blank = blank};
    auto mean = testing::RunForwardF64(c);
    ASSERT_TRUE(mean.ok()) << mean.status();
    EXPECT_NEAR((*mean)[0][0], (expect[0] / 2 + expect[1] / 2 + expect[2] / 1) / 3, 1e-10);
    c.attrs = LossAttrs{.reduction = Reduction::kSum, .blank = blank};
    auto sum = testing::RunForwardF64(c);
    ASSERT_TRUE(sum.ok()) << sum.status();
    EXPECT_NEAR((*sum)[0][0], expect[0] + expect[1] + expect[2], 1e-10);
  }
}

TEST(CtcLossKernelTest, EmptyTargetIsTheAllBlankPath) {
  OpCase c = CtcCase(Reduction::kNone, 0, {1, 2, 1, 2, 1, 2}, {5, 3, 0}, {0, 2, 0});
  auto in = MakeInputs(c);
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  double all_blank = 0;
  for (int64_t t = 0; t < 5; ++t) all_blank -= in[0].reals[(t * 3 + 0) * 4 + 0];
  EXPECT_NEAR((*y)[0][0], all_blank, 1e-12);
  EXPECT_NEAR((*y)[0][2], 0.0, 1e-12);  // no frames, no labels: probability 1
}

TEST(CtcLossKernelTest, GradientCheckReductionsBlanksAndLengths) {
  for (Reduction r : {Reduction::kNone, Reduction::kSum, Reduction::kMean})
    for (int64_t blank : {0, 3}) {
      OpCase c = CtcCase(r, blank, {1, 2, 1, 1, 2, 0}, {5, 4, 3}, {2, 2, 1});
      if (blank == 3) c.inputs[1].values = {1, 2, 1, 1, 0, 2};
      // Unnormalised scores: the gradient must hold for any input.
      c.inputs[0].values.clear();
      c.inputs[0].lo = -3;
      c.inputs[0].hi = 0;
      EXPECT_TRUE(GradientCheck(c)) << "reduction " << static_cast<int>(r) << " blank " << blank;
    }
}

TEST(CtcLossKernelTest, InfeasibleSampleHasZeroLossAndGradient) {
  // "1 1" needs 3 frames; sample 1 has 2.
  OpCase c = CtcCase(Reduction::kSum, 0, {1, 2, 1, 1, 2, 2}, {5, 2, 3}, {2, 2, 1});
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok());
  auto in = MakeInputs(c);
  const std::vector<std::vector<double>> dy = {{1.0}};
  auto run = testing::RunOp<double>(*g, in, &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  const double expect = BruteForceCtc(in[0].reals, 3, 0, 4, 5, {1, 2}, 0) +
                        BruteForceCtc(in[0].reals, 3, 2, 4, 3, {2}, 0);
  EXPECT_NEAR(run->outputs[0][0], expect, 1e-10);
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(run->grad_inputs[0][(t * 3 + 1) * 4 + k], 0.0);
}

TEST(CtcLossKernelTest, BlankTargetAndBadLengthsAreInvalidArgument) {
  const std::vector<std::pair<OpCase, std::string>> cases = {
      {CtcCase(Reduction::kMean, 0, {1, 0, 1, 1, 2, 2}, {5, 4, 3}, {2, 2, 1}), "target 0"},
      {CtcCase(Reduction::kMean, 0, {1, 2, 1, 1, 2, 2}, {5, 9, 3}, {2, 2, 1}), "sample 1"},
      {CtcCase(Reduction::kMean, 0, {1, 2, 1, 1, 2, 2}, {5, 4, 3}, {2, 2, 3}), "sample 2"},
      {CtcCase(Reduction::kMean, 0, {1, 2, 1, 7, 2, 2}, {5, 4, 3}, {2, 2, 1}), "target 7"}};
  for (const auto& [c, needle] : cases) {
    auto y = testing::RunForwardF64(c);
    ASSERT_FALSE(y.ok()) << needle;
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(y.status().message().find("test_CtcLoss"), std::string::npos);
    EXPECT_NE(y.status().message().find(needle), std::string::npos) << y.status();
  }
}

}  // namespace
}  // namespace tessera::exec::cpu
