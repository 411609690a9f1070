// The CUDA LSTM and CtcLoss kernels against the CPU kernels, forward (every output) and backward
// (every floating input's gradient), on random inputs. The comparisons are skipped where no GPU
// is present ("no GPU present: compiled, not run"); the host-side checks (dispatch table, shape
// errors raised before any device call) run everywhere.
#include <string>
#include <vector>

#include "tessera/tests/cuda/cuda_op_test_util.h"

namespace tessera::exec::cuda::testing {
namespace {

using graph::DType;
using graph::LossAttrs;
using graph::LstmAttrs;
using graph::LstmDirection;
using graph::OpKind;
using graph::Reduction;
using graph::Shape;

// ----- LSTM ----------------------------------------------------------------------------------

struct LstmVariant {
  std::string name;
  LstmDirection direction;
  int64_t layout;
  bool bias, h0, c0;
  std::vector<double> lens;  // empty: no sequence_lens
  int64_t input = 5;         // I
};

constexpr int64_t kT = 4, kB = 3, kH = 3;

OpCase LstmCase(const LstmVariant& v) {
  const int64_t dirs = v.direction == LstmDirection::kBidirectional ? 2 : 1;
  const Shape state = v.layout == 0 ? Shape{dirs, kB, kH} : Shape{kB, dirs, kH};
  OpCase c{.kind = OpKind::kLstm,
           .attrs = LstmAttrs{.hidden_size = kH, .direction = v.direction, .layout = v.layout},
           .num_outputs = 3};
  c.inputs.push_back({.shape = v.layout == 0 ? Shape{kT, kB, v.input} : Shape{kB, kT, v.input}});
  c.inputs.push_back({.shape = {dirs, 4 * kH, v.input}});
  c.inputs.push_back({.shape = {dirs, 4 * kH, kH}});
  c.inputs.push_back({.shape = {dirs, 8 * kH}, .absent = !v.bias});
  c.inputs.push_back(
      {.shape = {kB}, .dtype = DType::kI32, .values = v.lens, .absent = v.lens.empty()});
  c.inputs.push_back({.shape = state, .absent = !v.h0});
  c.inputs.push_back({.shape = state, .absent = !v.c0});
  return c;
}

std::vector<LstmVariant> LstmVariants() {
  return {
      {"forward_plain", LstmDirection::kForward, 0, false, false, false, {}},
      {"forward_all_inputs", LstmDirection::kForward, 0, true, true, true, {}},
      {"reverse_bias_h0", LstmDirection::kReverse, 0, true, true, false, {}},
      {"reverse_layout1_c0", LstmDirection::kReverse, 1, false, false, true, {}},
      {"bidirectional_all_inputs", LstmDirection::kBidirectional, 0, true, true, true, {}},
      {"bidirectional_layout1", LstmDirection::kBidirectional, 1, true, true, true, {}},
      {"forward_seq_lens", LstmDirection::kForward, 0, true, true, true, {4, 1, 2}},
      {"reverse_seq_lens_zero_length", LstmDirection::kReverse, 1, false, true, true, {0, 2, 4}},
      {"bidirectional_seq_lens_layout1", LstmDirection::kBidirectional, 1, true, false, true,
       {2, 4, 3}},
      {"bidirectional_seq_lens_no_state", LstmDirection::kBidirectional, 0, true, false, false,
       {3, 0, 4}},
      // A second stacked bidirectional layer reads the first one's [.., 2H] outputs.
      {"second_layer_input_2h", LstmDirection::kBidirectional, 0, true, true, true, {}, 2 * kH},
  };
}

TEST(CudaRecurrentTest, LstmMatchesCpuForEveryDirectionLayoutAndOptionalInput) {
  SKIP_WITHOUT_GPU();
  for (const LstmVariant& v : LstmVariants()) {
    EXPECT_TRUE(MatchesCpu(LstmCase(v), 5e-4f)) << v.name;
  }
}

TEST(CudaRecurrentTest, LstmWithOnlyTheRequiredInputsMatchesCpu) {
  SKIP_WITHOUT_GPU();
  // Three inputs (no trailing absent slots), as a graph without B, lengths or states has.
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kLstm,
                          .attrs = LstmAttrs{.hidden_size = 4},
                          .inputs = {{.shape = {6, 2, 3}}, {.shape = {1, 16, 3}},
                                     {.shape = {1, 16, 4}}},
                          .num_outputs = 3},
                         5e-4f));
}

// ----- CtcLoss -------------------------------------------------------------------------------

// log_probs [T, N, C] as log-softmax rows of random scores; targets [N, S].
OpCase CtcCase(Reduction reduction, int64_t blank, int64_t t, int64_t n, int64_t c,
               std::vector<double> targets, std::vector<double> input_lengths,
               std::vector<double> target_lengths) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<double> lp(t * n * c);
  for (int64_t row = 0; row < t * n; ++row) {
    double z = 0;
    for (int64_t k = 0; k < c; ++k) z += std::exp(lp[row * c + k] = dist(rng));
    for (int64_t k = 0; k < c; ++k) lp[row * c + k] -= std::log(z);
  }
  const int64_t s = static_cast<int64_t>(targets.size()) / n;
  return {.kind = OpKind::kCtcLoss,
          .attrs = LossAttrs{.reduction = reduction, .blank = blank},
          .inputs = {{.shape = {t, n, c}, .values = lp},
                     {.shape = {n, s}, .dtype = DType::kI64, .values = std::move(targets)},
                     {.shape = {n}, .dtype = DType::kI64, .values = std::move(input_lengths)},
                     {.shape = {n}, .dtype = DType::kI32, .values = std::move(target_lengths)}}};
}

TEST(CudaRecurrentTest, CtcLossMatchesCpuForEveryReduction) {
  SKIP_WITHOUT_GPU();
  // Repeated labels (1 1, 3 3 3), a short input, an empty target, labels next to each other.
  for (Reduction r : {Reduction::kMean, Reduction::kSum, Reduction::kNone}) {
    EXPECT_TRUE(MatchesCpu(CtcCase(r, 0, 12, 4, 6, {1, 1, 2, 2, 3, 3, 3, 0, 2, 5, 2, 5, 4, 0, 0, 0},
                                   {12, 9, 7, 5}, {4, 3, 4, 0})))
        << "reduction " << static_cast<int>(r);
  }
}

TEST(CudaRecurrentTest, CtcLossWithANonZeroBlankMatchesCpu) {
  SKIP_WITHOUT_GPU();
  EXPECT_TRUE(MatchesCpu(CtcCase(Reduction::kMean, 3, 5, 3, 4, {1, 2, 1, 1, 2, 0}, {5, 4, 3},
                                 {2, 2, 1})));
}

// A target too long for its input: 1 1 1 needs 5 frames (a blank between repeats), sample 0 has
// 4. Its loss and gradient are 0 (zero_infinity, which the op always applies); the feasible
// samples are unaffected.
TEST(CudaRecurrentTest, CtcLossWithAnInfeasibleSampleMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (Reduction r : {Reduction::kMean, Reduction::kSum, Reduction::kNone}) {
    EXPECT_TRUE(MatchesCpu(
        CtcCase(r, 0, 6, 3, 5, {1, 1, 1, 2, 3, 0, 4, 0, 0}, {4, 6, 2}, {3, 2, 1})))
        << "reduction " << static_cast<int>(r);
  }
  // Every sample infeasible: the loss is 0, not inf, and every gradient is 0.
  EXPECT_TRUE(MatchesCpu(CtcCase(Reduction::kMean, 0, 3, 2, 4, {1, 2, 3, 2, 2, 2}, {2, 3},
                                 {3, 3})));
}

// ----- Host-side checks (no GPU needed) ------------------------------------------------------

TEST(CudaRecurrentTest, LstmAndCtcLossHaveCudaKernels) {
  EXPECT_TRUE(HasCudaKernel(OpKind::kLstm));
  EXPECT_TRUE(HasCudaKernel(OpKind::kCtcLoss));
}

// Tensors whose data is a host address that the kernels never dereference: the shape checks
// fail before any device call.
std::vector<Tensor> FakeTensors(const std::vector<Shape>& shapes, std::vector<float>& backing) {
  std::vector<Tensor> out;
  for (const Shape& s : shapes) out.push_back({.shape = s, .data = backing.data()});
  return out;
}

graph::Node NodeWith(OpKind kind, graph::OpAttrs attrs, size_t inputs, size_t outputs) {
  graph::Node node{.name = "my_node", .kind = kind, .attrs = std::move(attrs)};
  for (size_t i = 0; i < inputs; ++i) node.inputs.push_back(static_cast<graph::TensorId>(i));
  for (size_t j = 0; j < outputs; ++j) {
    node.outputs.push_back(static_cast<graph::TensorId>(inputs + j));
  }
  return node;
}

TEST(CudaRecurrentTest, LstmShapeErrorsNameTheNodeAndTheTensor) {
  std::vector<float> backing(1);
  const graph::Node node = NodeWith(OpKind::kLstm, LstmAttrs{.hidden_size = 2}, 3, 3);
  // W should be [1, 8, 3]; it is [1, 8, 4].
  const std::vector<Tensor> in = FakeTensors({{5, 2, 3}, {1, 8, 4}, {1, 8, 2}}, backing);
  const std::vector<Tensor> out = FakeTensors({{5, 1, 2, 2}, {1, 2, 2}, {1, 2, 2}}, backing);
  OpState state;
  const absl::Status s = Forward(node, in, out, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("my_node"), std::string::npos) << s;
  EXPECT_NE(s.message().find("W has shape [1,8,4]"), std::string::npos) << s;

  const graph::Node short_node = NodeWith(OpKind::kLstm, LstmAttrs{.hidden_size = 2}, 2, 3);
  const absl::Status s2 =
      Forward(short_node, absl::MakeConstSpan(in.data(), 2), out, KernelContext{}, state);
  EXPECT_EQ(s2.code(), absl::StatusCode::kInvalidArgument) << s2;
  EXPECT_NE(s2.message().find("X, W, R"), std::string::npos) << s2;
}

TEST(CudaRecurrentTest, CtcLossShapeErrorsNameTheNode) {
  std::vector<float> backing(1);
  const graph::Node node = NodeWith(OpKind::kCtcLoss, LossAttrs{}, 4, 1);
  // targets has 2 rows for a batch of 3.
  const std::vector<Tensor> in = FakeTensors({{5, 3, 4}, {2, 2}, {3}, {3}}, backing);
  const std::vector<Tensor> out = FakeTensors({{}}, backing);
  OpState state;
  const absl::Status s = Forward(node, in, out, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("my_node"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CtcLoss"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[2,2]"), std::string::npos) << s;
}

}  // namespace
}  // namespace tessera::exec::cuda::testing
