// The CPU LSTM's fast paths (float state, vectorised cells, rows split over threads, one product
// per weight gradient) at sizes where they switch on: the float kernel against the double one,
// the double forward against the ONNX equations computed one scalar at a time, central
// differences through the threaded path, and the same bits whatever the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::LstmAttrs;
using graph::LstmDirection;
using graph::OpKind;
using graph::Shape;
using testing::OpCase;

struct Variant {
  std::string name;
  int64_t t, b, i, h;
  LstmDirection direction;
  int64_t layout;
  bool bias, h0, c0;
  std::vector<double> lens;  // empty: no sequence_lens
};

int64_t Dirs(const Variant& v) { return v.direction == LstmDirection::kBidirectional ? 2 : 1; }

OpCase MakeCase(const Variant& v) {
  const Shape state = v.layout == 0 ? Shape{Dirs(v), v.b, v.h} : Shape{v.b, Dirs(v), v.h};
  OpCase c{.kind = OpKind::kLstm,
           .attrs = LstmAttrs{.hidden_size = v.h, .direction = v.direction, .layout = v.layout},
           .num_outputs = 3,
           .seed = 17};
  c.inputs.push_back({.shape = v.layout == 0 ? Shape{v.t, v.b, v.i} : Shape{v.b, v.t, v.i}});
  // Weights of the size PyTorch's default init gives, so the gates do not saturate.
  const double w = 1 / std::sqrt(static_cast<double>(v.h));
  c.inputs.push_back({.shape = {Dirs(v), 4 * v.h, v.i}, .lo = -w, .hi = w});
  c.inputs.push_back({.shape = {Dirs(v), 4 * v.h, v.h}, .lo = -w, .hi = w});
  c.inputs.push_back({.shape = {Dirs(v), 8 * v.h}, .lo = -w, .hi = w, .absent = !v.bias});
  c.inputs.push_back(
      {.shape = {v.b}, .dtype = DType::kI32, .values = v.lens, .absent = v.lens.empty()});
  c.inputs.push_back({.shape = state, .absent = !v.h0});
  c.inputs.push_back({.shape = state, .absent = !v.c0});
  return c;
}

// Lengths in [0, t] with a full row, an empty one and short ones.
std::vector<double> MixedLengths(int64_t b, int64_t t) {
  std::vector<double> lens(b);
  for (int64_t r = 0; r < b; ++r) lens[r] = static_cast<double>((r * 5 + 3) % (t + 1));
  lens[0] = static_cast<double>(t);
  if (b > 1) lens[1] = 0;
  return lens;
}

// B * H >= 4096 for the 33-row cases: their cell math is split over two threads.
std::vector<Variant> Variants() {
  const int64_t t = 6;
  return {
      {"forward_b33", t, 33, 24, 128, LstmDirection::kForward, 0, true, true, true, {}},
      {"reverse_b33_lens", t, 33, 24, 128, LstmDirection::kReverse, 0, true, false, true,
       MixedLengths(33, t)},
      {"bidirectional_b33_lens_layout1", t, 33, 24, 128, LstmDirection::kBidirectional, 1, true,
       true, true, MixedLengths(33, t)},
      {"bidirectional_b33_equal_short_lens", t, 33, 24, 128, LstmDirection::kBidirectional, 0,
       false, true, false, std::vector<double>(33, 4.0)},
      {"forward_b1", t, 1, 24, 96, LstmDirection::kForward, 0, true, true, true, {}},
      {"bidirectional_b1_layout1", t, 1, 24, 96, LstmDirection::kBidirectional, 1, false, false,
       false, {}},
      {"reverse_b5_lens_layout1", t, 5, 7, 40, LstmDirection::kReverse, 1, true, true, true,
       {6, 0, 2, 5, 1}},
  };
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// The ONNX equations in double, one scalar at a time: {Y, Y_h, Y_c}.
std::vector<std::vector<double>> NaiveLstm(const Variant& v,
                                           const std::vector<testing::Storage>& in) {
  const int64_t dirs = Dirs(v), H = v.h;
  const auto x = [&](int64_t t, int64_t b, int64_t i) {
    return in[0].reals[(v.layout == 0 ? t * v.b + b : b * v.t + t) * v.i + i];
  };
  const auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return (v.layout == 0 ? d * v.b + b : b * dirs + d) * H + j;
  };
  std::vector<double> y(v.t * dirs * v.b * H, 0.0), yh(dirs * v.b * H), yc(dirs * v.b * H);
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t b = 0; b < v.b; ++b) {
      const int64_t len = v.lens.empty() ? v.t : static_cast<int64_t>(v.lens[b]);
      std::vector<double> h(H, 0.0), c(H, 0.0), gate(4 * H);
      for (int64_t j = 0; j < H; ++j) {
        if (v.h0) h[j] = in[5].reals[state_index(d, b, j)];
        if (v.c0) c[j] = in[6].reals[state_index(d, b, j)];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = v.direction == LstmDirection::kReverse || d == 1 ? len - 1 - step : step;
        for (int64_t r = 0; r < 4 * H; ++r) {
          double s = 0;
          for (int64_t i = 0; i < v.i; ++i)
            s += x(t, b, i) * in[1].reals[(d * 4 * H + r) * v.i + i];
          for (int64_t j = 0; j < H; ++j) s += h[j] * in[2].reals[(d * 4 * H + r) * H + j];
          if (v.bias) s += in[3].reals[d * 8 * H + r] + in[3].reals[d * 8 * H + 4 * H + r];
          gate[r] = s;
        }
        for (int64_t j = 0; j < H; ++j) {
          c[j] = Sigmoid(gate[2 * H + j]) * c[j] + Sigmoid(gate[j]) * std::tanh(gate[3 * H + j]);
          h[j] = Sigmoid(gate[H + j]) * std::tanh(c[j]);
          y[v.layout == 0 ? ((t * dirs + d) * v.b + b) * H + j
                          : ((b * v.t + t) * dirs + d) * H + j] = h[j];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        yh[state_index(d, b, j)] = h[j];
        yc[state_index(d, b, j)] = c[j];
      }
    }
  return {y, yh, yc};
}

// Random upstream gradients for the three outputs.
std::vector<std::vector<double>> UpstreamGradients(const graph::Graph& g) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<double>> dy;
  for (graph::TensorId t : g.node(0).outputs) {
    dy.emplace_back(testing::NumElements(g.tensor(t).shape));
    for (double& value : dy.back()) value = dist(rng);
  }
  return dy;
}

// Largest |a - b| / max(1, |b|) over two lists of arrays.
template <typename A>
double MaxRelativeError(const std::vector<std::vector<A>>& a,
                        const std::vector<std::vector<double>>& b) {
  double worst = 0;
  for (size_t k = 0; k < b.size(); ++k) {
    EXPECT_EQ(a[k].size(), b[k].size());
    for (size_t e = 0; e < std::min(a[k].size(), b[k].size()); ++e)
      worst = std::max(worst, std::abs(a[k][e] - b[k][e]) / std::max(1.0, std::abs(b[k][e])));
  }
  return worst;
}

TEST(LstmFastPathTest, DoubleForwardMatchesScalarOnnxEquations) {
  for (const Variant& v : Variants()) {
    const OpCase c = MakeCase(v);
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << v.name << ": " << y.status();
    EXPECT_LT(MaxRelativeError(*y, NaiveLstm(v, testing::MakeInputs(c))), 1e-12) << v.name;
  }
}

TEST(LstmFastPathTest, FloatKernelMatchesDoubleKernel) {
  for (const Variant& v : Variants()) {
    const OpCase c = MakeCase(v);
    auto g = testing::BuildOpGraph(c);
    ASSERT_TRUE(g.ok()) << g.status();
    const auto inputs = testing::MakeInputs(c);
    const auto dy = UpstreamGradients(*g);
    auto f64 = testing::RunOp<double>(*g, inputs, &dy);
    auto f32 = testing::RunOp<float>(*g, inputs, &dy);
    ASSERT_TRUE(f64.ok() && f32.ok()) << v.name;
    EXPECT_LT(MaxRelativeError(f32->outputs, f64->outputs), 1e-5) << v.name << " outputs";
    // Weight gradients sum T*B products of float values.
    EXPECT_LT(MaxRelativeError(f32->grad_inputs, f64->grad_inputs), 1e-4) << v.name << " grads";
    // A gradient that is all zeros would match anything above: the inputs all get one.
    for (size_t i : {0, 1, 2}) {
      double norm = 0;
      for (double value : f64->grad_inputs[i]) norm += std::abs(value);
      EXPECT_GT(norm, 0) << v.name << " input " << i;
    }
  }
}

TEST(LstmFastPathTest, SameBitsWithOneOrTwoThreads) {
  for (const Variant& v : Variants()) {
    const OpCase c = MakeCase(v);
    auto g = testing::BuildOpGraph(c);
    ASSERT_TRUE(g.ok()) << g.status();
    const auto inputs = testing::MakeInputs(c);
    const auto dy = UpstreamGradients(*g);
    auto one = testing::RunOp<float>(*g, inputs, &dy, KernelContext{.threads = 1});
    auto two = testing::RunOp<float>(*g, inputs, &dy, KernelContext{.threads = 2});
    ASSERT_TRUE(one.ok() && two.ok()) << v.name;
    EXPECT_EQ(one->outputs, two->outputs) << v.name;
    EXPECT_EQ(one->grad_inputs, two->grad_inputs) << v.name;
  }
}

TEST(LstmFastPathTest, GradientCheckThroughThreadedCells) {
  testing::GradCheckOptions options;
  options.max_elements = 6;
  for (const Variant& v : Variants()) {
    if (v.b * v.h < 4096) continue;  // the small cases are the existing checks' job
    EXPECT_TRUE(testing::GradientCheck(MakeCase(v), options)) << v.name;
  }
}

}  // namespace
}  // namespace tessera::exec::cpu
