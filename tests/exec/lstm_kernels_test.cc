// CPU kernel of the recurrent family: ONNX LSTM (gate order i, o, f, c; layouts
// 0 and 1; forward, reverse, bidirectional; optional B, sequence_lens,
// initial_h, initial_c).
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::DType;
using graph::LstmAttrs;
using graph::LstmDirection;
using graph::OpKind;
using graph::Shape;
using testing::GradientCheck;
using testing::MakeInputs;
using testing::OpCase;

struct LstmVariant {
  std::string name;
  LstmDirection direction;
  int64_t layout;
  bool bias, h0, c0;
  std::vector<double> lens;  // empty: no sequence_lens
};

constexpr int64_t kT = 3, kB = 2, kI = 3, kH = 2;

OpCase LstmCase(const LstmVariant& v) {
  const int64_t dirs = v.direction == LstmDirection::kBidirectional ? 2 : 1;
  const Shape state = v.layout == 0 ? Shape{dirs, kB, kH} : Shape{kB, dirs, kH};
  OpCase c{.kind = OpKind::kLstm,
           .attrs = LstmAttrs{.hidden_size = kH, .direction = v.direction, .layout = v.layout},
           .num_outputs = 3};
  c.inputs.push_back({.shape = v.layout == 0 ? Shape{kT, kB, kI} : Shape{kB, kT, kI}});
  c.inputs.push_back({.shape = {dirs, 4 * kH, kI}});
  c.inputs.push_back({.shape = {dirs, 4 * kH, kH}});
  c.inputs.push_back({.shape = {dirs, 8 * kH}, .absent = !v.bias});
  c.inputs.push_back(
      {.shape = {kB}, .dtype = DType::kI32, .values = v.lens, .absent = v.lens.empty()});
  c.inputs.push_back({.shape = state, .absent = !v.h0});
  c.inputs.push_back({.shape = state, .absent = !v.c0});
  return c;
}

std::vector<LstmVariant> Variants() {
  return {
      {"forward_plain", LstmDirection::kForward, 0, false, false, false, {}},
      {"forward_all_inputs", LstmDirection::kForward, 0, true, true, true, {}},
      {"reverse_bias_h0", LstmDirection::kReverse, 0, true, true, false, {}},
      {"bidirectional_layout1", LstmDirection::kBidirectional, 1, true, true, true, {}},
      {"forward_seq_lens", LstmDirection::kForward, 0, true, true, true, {3, 1}},
      {"bidirectional_seq_lens_layout1",
       LstmDirection::kBidirectional,
       1,
       true,
       false,
       true,
       {2, 3}},
      {"reverse_seq_lens_zero_length", LstmDirection::kReverse, 1, false, true, true, {0, 2}},
  };
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// The ONNX equations, one scalar at a time.
std::vector<std::vector<double>> NaiveLstm(const LstmVariant& v,
                                           const std::vector<testing::Storage>& in) {
  const int64_t dirs = v.direction == LstmDirection::kBidirectional ? 2 : 1;
  const auto x = [&](int64_t t, int64_t b, int64_t i) {
    return in[0].reals[(v.layout == 0 ? t * kB + b : b * kT + t) * kI + i];
  };
  const auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return (v.layout == 0 ? d * kB + b : b * dirs + d) * kH + j;
  };
  std::vector<double> y(kT * dirs * kB * kH, 0.0), yh(dirs * kB * kH), yc(dirs * kB * kH);
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = v.direction == LstmDirection::kReverse || d == 1;
    for (int64_t b = 0; b < kB; ++b) {
      const int64_t len = v.lens.empty() ? kT : static_cast<int64_t>(v.lens[b]);
      std::vector<double> h(kH, 0.0), c(kH, 0.0);
      for (int64_t j = 0; j < kH; ++j) {
        if (v.h0) h[j] = in[5].reals[state_index(d, b, j)];
        if (v.c0) c[j] = in[6].reals[state_index(d, b, j)];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        std::vector<double> gate(4 * kH);
        for (int64_t r = 0; r < 4 * kH; ++r) {
          double s = 0;
          for (int64_t i = 0; i < kI; ++i) s += x(t, b, i) * in[1].reals[(d * 4 * kH + r) * kI + i];
          for (int64_t j = 0; j < kH; ++j) s += h[j] * in[2].reals[(d * 4 * kH + r) * kH + j];
          if (v.bias) s += in[3].reals[d * 8 * kH + r] + in[3].reals[d * 8 * kH + 4 * kH + r];
          gate[r] = s;
        }
        for (int64_t j = 0; j < kH; ++j) {
          const double ig = Sigmoid(gate[j]), og = Sigmoid(gate[kH + j]),
                       fg = Sigmoid(gate[2 * kH + j]), cg = std::tanh(gate[3 * kH + j]);
          c[j] = fg * c[j] + ig * cg;
          h[j] = og * std::tanh(c[j]);
        }
        for (int64_t j = 0; j < kH; ++j) {
          const int64_t yi = v.layout == 0 ? ((t * dirs + d) * kB + b) * kH + j
                                           : ((b * kT + t) * dirs + d) * kH + j;
          y[yi] = h[j];
        }
      }
      for (int64_t j = 0; j < kH; ++j) {
        yh[state_index(d, b, j)] = h[j];
        yc[state_index(d, b, j)] = c[j];
      }
    }
  }
  return {y, yh, yc};
}

TEST(LstmKernelTest, ForwardMatchesNaiveOnnxEquations) {
  for (const LstmVariant& v : Variants()) {
    OpCase c = LstmCase(v);
    auto in = MakeInputs(c);
    auto y = testing::RunForwardF64(c);
    ASSERT_TRUE(y.ok()) << v.name << ": " << y.status();
    const auto expect = NaiveLstm(v, in);
    for (int out = 0; out < 3; ++out) {
      ASSERT_EQ((*y)[out].size(), expect[out].size()) << v.name;
      for (size_t i = 0; i < expect[out].size(); ++i)
        EXPECT_NEAR((*y)[out][i], expect[out][i], 1e-12)
            << v.name << " output " << out << "[" << i << "]";
    }
  }
}

TEST(LstmKernelTest, GradientCheckEveryDirectionLayoutAndOptionalInput) {
  for (const LstmVariant& v : Variants()) EXPECT_TRUE(GradientCheck(LstmCase(v))) << v.name;
}

// Values from PyTorch (Debian python3-torch 1.13, float64): nn.LSTM(3, 2, bidirectional=True) with
// its weights set from these ONNX ones (rows reordered i,o,f,c -> i,f,g,o), outputs reordered [T,
// B, 2H] -> [T, dirs, B, H]; the second case packs sequences of lengths {2, 3}.
OpCase TorchCase(bool lens) {
  const auto vals = [](int64_t n, auto f) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = f(static_cast<double>(i));
    return v;
  };
  LstmVariant v{"torch", LstmDirection::kBidirectional, 0, true, true, true, {}};
  if (lens) v.lens = {2, 3};
  OpCase c = LstmCase(v);
  c.inputs[0].values = vals(kT * kB * kI, [](double i) { return std::sin(0.3 * i + 0.1); });
  c.inputs[1].values = vals(2 * 4 * kH * kI, [](double i) { return 0.5 * std::cos(0.7 * i); });
  c.inputs[2].values =
      vals(2 * 4 * kH * kH, [](double i) { return 0.4 * std::sin(1.3 * i + 0.5); });
  c.inputs[3].values = vals(2 * 8 * kH, [](double i) { return 0.3 * std::cos(0.9 * i + 0.2); });
  c.inputs[5].values = vals(2 * kB * kH, [](double i) { return 0.2 * std::sin(2.1 * i); });
  c.inputs[6].values = vals(2 * kB * kH, [](double i) { return 0.3 * std::cos(1.7 * i); });
  return c;
}

void ExpectOutputs(const OpCase& c, const std::vector<std::vector<double>>& expect) {
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  for (int out = 0; out < 3; ++out) {
    ASSERT_EQ((*y)[out].size(), expect[out].size());
    for (size_t i = 0; i < expect[out].size(); ++i)
      EXPECT_NEAR((*y)[out][i], expect[out][i], 1e-12) << "output " << out << "[" << i << "]";
  }
}

TEST(LstmKernelTest, BidirectionalMatchesPyTorch) {
  ExpectOutputs(
      TorchCase(false),
      {{0.219269153424433,   -0.0146423712001382, 0.263653391917133,   -0.0451749778609647,
        0.0458276515044534,  -0.0374199248476318, 0.00368818478338318, 0.0997373739446139,
        0.265744132018698,   -0.093236335930295,  0.192685952624415,   0.0648001223237918,
        0.00587663282549439, 0.0396401686866672,  -0.0731147682847145, -0.0592236541120472,
        0.136469546386434,   0.129391082641994,   0.0951372510104283,  0.128411471395125,
        -0.0146952815246119, -0.147257589976936,  -0.126034500994056,  0.0124994921853063},
       {0.136469546386434, 0.129391082641994, 0.0951372510104283, 0.128411471395125,
        0.0458276515044534, -0.0374199248476318, 0.00368818478338318, 0.0997373739446139},
       {0.471076238997747, 0.544969456648508, 0.281577995119397, 0.769615371092304,
        0.140849050468389, -0.0598158803832454, 0.0187906741032949, 0.154663032599043}});
}

TEST(LstmKernelTest, BidirectionalWithSequenceLengthsMatchesPyTorchPackedSequences) {
  ExpectOutputs(
      TorchCase(true),
      {{0.219269153424433,
        -0.0146423712001382,
        0.263653391917133,
        -0.0451749778609647,
        0.0891634108351751,
        -0.00840182001659359,
        0.00368818478338318,
        0.0997373739446139,
        0.265744132018698,
        -0.093236335930295,
        0.192685952624415,
        0.0648001223237918,
        0.0540687609083958,
        0.0861049750657357,
        -0.0731147682847145,
        -0.0592236541120472,
        0,
        0,
        0.0951372510104283,
        0.128411471395125,
        0,
        0,
        -0.126034500994056,
        0.0124994921853063},
       {0.265744132018698, -0.093236335930295, 0.0951372510104283, 0.128411471395125,
        0.0891634108351751, -0.00840182001659359, 0.00368818478338318, 0.0997373739446139},
       {0.792444008527255, -0.158408945474687, 0.281577995119397, 0.769615371092304,
        0.273952665255468, -0.0135676544400939, 0.0187906741032949, 0.154663032599043}});
}

TEST(LstmKernelTest, SequenceLengthOutOfRangeIsInvalidArgument) {
  LstmVariant v{"bad", LstmDirection::kForward, 0, false, false, false, {2, 4}};
  auto y = testing::RunForwardF64(LstmCase(v));
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("test_LSTM"), std::string::npos);
  EXPECT_NE(y.status().message().find("sequence_lens[1] is 4"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace tessera::exec::cpu
