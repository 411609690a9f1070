// The CUDA kernels of Gemm, MatMul (cuBLAS), Conv (cuDNN), MaxPool, AveragePool,
// GlobalAveragePool and BatchNormalization against the CPU kernels, forward and every input
// gradient, on random inputs. GPU tests are skipped where no GPU is present ("no GPU present:
// compiled, not run"); the host-side checks at the end (the dispatcher's table, errors raised
// before any device call) run everywhere.
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tests/cuda/cuda_op_test_util.h"

namespace tessera::exec::cuda::testing {
namespace {

using graph::ConvAttrs;
using graph::GemmAttrs;
using graph::OpKind;
using graph::PoolAttrs;
using graph::Shape;

// ----- Gemm and MatMul -------------------------------------------------------------------------

TEST(CudaDenseConvTest, GemmMatchesCpuForEveryTransposeAndEveryBroadcastOfC) {
  SKIP_WITHOUT_GPU();
  const int64_t m = 3, k = 5, n = 4;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Shape a = ta ? Shape{k, m} : Shape{m, k};
      const Shape b = tb ? Shape{n, k} : Shape{k, n};
      const GemmAttrs attrs{.trans_a = ta, .trans_b = tb, .alpha = 0.7, .beta = 1.3};
      for (const Shape& c : {Shape{}, Shape{1}, Shape{n}, Shape{m, 1}, Shape{1, n}, Shape{m, n}}) {
        EXPECT_TRUE(MatchesCpu(
            {.kind = OpKind::kGemm, .attrs = attrs, .inputs = {{.shape = a}, {.shape = b},
                                                               {.shape = c}}}))
            << "trans_a " << ta << " trans_b " << tb << " C " << graph::ShapeString(c);
      }
      EXPECT_TRUE(MatchesCpu({.kind = OpKind::kGemm, .attrs = attrs,
                              .inputs = {{.shape = a}, {.shape = b}}}))
          << "no C, trans_a " << ta << " trans_b " << tb;
    }
  }
  // beta = 0: C is ignored and its gradient is 0.
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kGemm, .attrs = GemmAttrs{.beta = 0},
                          .inputs = {{.shape = {m, k}}, {.shape = {k, n}}, {.shape = {n}}}}));
}

TEST(CudaDenseConvTest, MatMulMatchesCpuWithBatchBroadcastAndVectors) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 5}},              // one matrix each
      {{2, 3, 4}, {4, 5}},           // batch folded into A's rows
      {{2, 3, 4}, {2, 4, 5}},        // same batch: one strided batched product
      {{2, 1, 3, 4}, {3, 4, 5}},     // both broadcast: batch [2, 3]
      {{3, 4}, {2, 4, 5}},           // A shared by every batch: dA accumulates
      {{2, 3, 4}, {1, 4, 5}},        // B broadcast along a unit batch axis
      {{4}, {2, 4, 5}},              // 1-D A
      {{2, 3, 4}, {4}},              // 1-D B
      {{4}, {4}},                    // dot product: a scalar
  };
  for (const auto& [a, b] : cases) {
    EXPECT_TRUE(MatchesCpu({.kind = OpKind::kMatMul, .inputs = {{.shape = a}, {.shape = b}}}))
        << graph::ShapeString(a) << " x " << graph::ShapeString(b);
  }
}

// ----- Conv ------------------------------------------------------------------------------------

struct ConvCase {
  std::string name;
  Shape x, w;
  ConvAttrs attrs;
  bool bias = true;
};

TEST(CudaDenseConvTest, ConvMatchesCpuGroupedDepthwiseStridedPaddedDilatedAnyRank) {
  SKIP_WITHOUT_GPU();
  const std::vector<ConvCase> cases = {
      {"2-D plain", {2, 3, 7, 6}, {4, 3, 3, 3}, {}},
      {"2-D no bias", {2, 3, 7, 6}, {4, 3, 3, 3}, {}, false},
      {"2-D strided padded dilated", {2, 3, 9, 8}, {4, 3, 3, 2},
       {.strides = {2, 1}, .pads = {1, 2, 1, 2}, .dilations = {1, 2}}},
      {"2-D asymmetric pads", {2, 3, 7, 6}, {4, 3, 3, 3},
       {.strides = {2, 2}, .pads = {0, 1, 2, 0}}},
      {"2-D grouped", {2, 4, 6, 6}, {6, 2, 3, 3}, {.pads = {1, 1, 1, 1}, .groups = 2}},
      {"2-D depthwise x2", {2, 3, 5, 5}, {6, 1, 3, 3}, {.pads = {1, 1, 1, 1}, .groups = 3}},
      {"2-D depthwise strided asymmetric", {2, 4, 8, 7}, {4, 1, 3, 3},
       {.strides = {2, 2}, .pads = {1, 0, 1, 0}, .groups = 4}},
      {"1-D", {2, 3, 9}, {4, 3, 3}, {.strides = {2}, .pads = {1, 1}, .dilations = {2}}},
      {"1-D asymmetric pads", {2, 3, 9}, {4, 3, 3}, {.pads = {2, 0}}},
      {"3-D", {2, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, {.pads = {1, 1, 0, 1, 1, 0}}},
      {"3-D asymmetric pads grouped", {1, 4, 4, 5, 3}, {2, 2, 2, 3, 2},
       {.strides = {1, 2, 1}, .pads = {1, 0, 1, 0, 1, 1}, .groups = 2}},
  };
  for (const ConvCase& c : cases) {
    OpCase op{.kind = OpKind::kConv, .attrs = c.attrs,
              .inputs = {{.shape = c.x}, {.shape = c.w}}};
    if (c.bias) op.inputs.push_back({.shape = {c.w[0]}});
    EXPECT_TRUE(MatchesCpu(op, 1e-3f)) << c.name;
  }
}

// ----- Pooling ---------------------------------------------------------------------------------

struct PoolCase {
  std::string name;
  Shape x;
  PoolAttrs attrs;
};

std::vector<PoolCase> PoolCases() {
  return {
      {"2-D padded strided", {2, 3, 7, 8}, {.kernel_shape = {3, 3}, .strides = {2, 2},
                                            .pads = {1, 1, 1, 1}}},
      {"2-D asymmetric pads ceil_mode", {2, 3, 7, 8},
       {.kernel_shape = {3, 2}, .strides = {2, 3}, .pads = {0, 1, 1, 0}, .ceil_mode = true}},
      {"2-D overlapping stride 1", {1, 2, 5, 5}, {.kernel_shape = {2, 2}}},
      {"1-D", {2, 3, 10}, {.kernel_shape = {3}, .strides = {2}, .pads = {1, 1},
                           .ceil_mode = true}},
      {"3-D", {1, 2, 5, 4, 6}, {.kernel_shape = {2, 3, 2}, .strides = {2, 1, 2},
                                .pads = {1, 1, 0, 0, 1, 1}}},
  };
}

TEST(CudaDenseConvTest, MaxPoolMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (const PoolCase& c : PoolCases()) {
    EXPECT_TRUE(MatchesCpu({.kind = OpKind::kMaxPool, .attrs = c.attrs,
                            .inputs = {{.shape = c.x}}}))
        << c.name;
  }
}

TEST(CudaDenseConvTest, AveragePoolMatchesCpuWithAndWithoutPadCounting) {
  SKIP_WITHOUT_GPU();
  for (bool include_pad : {false, true}) {
    for (PoolCase c : PoolCases()) {
      c.attrs.count_include_pad = include_pad;
      EXPECT_TRUE(MatchesCpu({.kind = OpKind::kAveragePool, .attrs = c.attrs,
                              .inputs = {{.shape = c.x}}}))
          << c.name << " count_include_pad " << include_pad;
    }
  }
}

TEST(CudaDenseConvTest, GlobalAveragePoolMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (const Shape& x : {Shape{2, 3, 5, 4}, Shape{2, 2, 7}, Shape{1, 3, 2, 3, 4},
                         Shape{2, 2, 40, 30}}) {
    EXPECT_TRUE(MatchesCpu({.kind = OpKind::kGlobalAveragePool, .inputs = {{.shape = x}}}))
        << graph::ShapeString(x);
  }
}

// ----- BatchNormalization ----------------------------------------------------------------------

OpCase BatchNormCase(const Shape& x, double var_lo = 0.1) {
  const int64_t c = x[1];
  return {.kind = OpKind::kBatchNorm,
          .attrs = graph::BatchNormAttrs{.epsilon = 1e-3},
          .inputs = {{.shape = x},
                     {.shape = {c}, .lo = 0.5, .hi = 2},
                     {.shape = {c}},
                     {.shape = {c}, .role = graph::TensorRole::kConstant},
                     {.shape = {c}, .lo = var_lo, .hi = 2, .role = graph::TensorRole::kConstant}}};
}

TEST(CudaDenseConvTest, BatchNormTrainingMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (const Shape& x : {Shape{4, 3, 5, 5}, Shape{6, 4}, Shape{2, 3, 7}, Shape{1, 2, 1}}) {
    EXPECT_TRUE(MatchesCpu(BatchNormCase(x), 1e-3f)) << graph::ShapeString(x);
  }
}

// What one BatchNormalization forward + backward produced, on the host: Y, the gradient of each
// of the 5 inputs, and the statistics kept in the state (CPU reals[k], CUDA buffers[k]).
struct BatchNormRun {
  std::vector<float> y;
  std::vector<std::vector<float>> grads, state;
};

absl::StatusOr<BatchNormRun> RunBatchNormCpu(const graph::Node& node,
                                             const std::vector<std::vector<float>>& in,
                                             const std::vector<Shape>& shapes,
                                             std::vector<float> dy, bool training) {
  BatchNormRun run{.y = std::vector<float>(dy.size())};
  std::vector<std::vector<float>> values = in;
  std::vector<cpu::Tensor<float>> cin, cdin;
  run.grads.resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    run.grads[i].assign(in[i].size(), 0.f);
    cin.push_back({.shape = shapes[i], .data = values[i].data()});
    cdin.push_back({.shape = shapes[i], .data = run.grads[i].data()});
  }
  const std::vector<cpu::Tensor<float>> y = {{.shape = shapes[0], .data = run.y.data()}};
  const std::vector<cpu::Tensor<float>> dout = {{.shape = shapes[0], .data = dy.data()}};
  cpu::KernelContext ctx;
  ctx.training = training;
  cpu::OpState state;
  TS_RETURN_IF_ERROR(cpu::Forward<float>(node, cin, y, ctx, state));
  TS_RETURN_IF_ERROR(cpu::Backward<float>(node, cin, y, dout, cdin, ctx, state));
  for (const std::vector<double>& r : state.reals) run.state.emplace_back(r.begin(), r.end());
  return run;
}

absl::StatusOr<BatchNormRun> RunBatchNormCuda(const graph::Node& node,
                                              const std::vector<std::vector<float>>& in,
                                              const std::vector<Shape>& shapes,
                                              const std::vector<float>& dy, bool training) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<memory::CudaMemory> gpu, memory::CudaMemory::Create(0));
  std::vector<memory::DeviceAllocation> keep;
  const auto add = [&](const std::vector<float>& host) -> absl::StatusOr<float*> {
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation b, Upload(*gpu, host));
    keep.push_back(std::move(b));
    return static_cast<float*>(keep.back().data());
  };
  std::vector<Tensor> din, cin;
  for (size_t i = 0; i < in.size(); ++i) {
    TS_ASSIGN_OR_RETURN(float* x, add(in[i]));
    TS_ASSIGN_OR_RETURN(float* g, add(std::vector<float>(in[i].size())));
    cin.push_back({.shape = shapes[i], .data = x});
    din.push_back({.shape = shapes[i], .data = g});
  }
  TS_ASSIGN_OR_RETURN(float* y, add(std::vector<float>(dy.size())));
  TS_ASSIGN_OR_RETURN(float* g, add(dy));
  const std::vector<Tensor> out = {{.shape = shapes[0], .data = y}};
  const std::vector<Tensor> dout = {{.shape = shapes[0], .data = g}};
  TS_ASSIGN_OR_RETURN(CublasHandle blas, CublasHandle::Create());
  TS_ASSIGN_OR_RETURN(CudnnHandle dnn, CudnnHandle::Create());
  const KernelContext ctx{
      .blas = blas.get(), .dnn = dnn.get(), .memory = gpu.get(), .training = training};
  OpState state;
  TS_RETURN_IF_ERROR(Forward(node, cin, out, ctx, state));
  TS_RETURN_IF_ERROR(Backward(node, cin, out, dout, din, ctx, state));
  TS_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  BatchNormRun run;
  TS_ASSIGN_OR_RETURN(run.y, Download(y, dy.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    TS_ASSIGN_OR_RETURN(run.grads.emplace_back(), Download(din[i].data, in[i].size()));
  }
  const int64_t channels = shapes[0][1];
  for (const memory::DeviceAllocation& b : state.buffers) {
    TS_ASSIGN_OR_RETURN(run.state.emplace_back(),
                        Download(static_cast<const float*>(b.data()), channels));
  }
  return run;
}

// BatchNormalization in either mode on both back-ends: Y, every input gradient, and the
// statistics each forward leaves for its backward and for the running-statistics update (mean,
// inverse std and, in training, the unbiased variance).
::testing::AssertionResult BatchNormMatchesCpuInMode(const OpCase& c, bool training,
                                                     float tol) {
  auto g = cpu::testing::BuildOpGraph(c);
  if (!g.ok()) return ::testing::AssertionFailure() << "graph: " << g.status();
  const graph::Node& node = g->node(0);
  const std::vector<cpu::testing::Storage> inputs = cpu::testing::MakeInputs(c);
  std::vector<std::vector<float>> in;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    in.emplace_back(inputs[i].reals.begin(), inputs[i].reals.end());
    shapes.push_back(g->tensor(node.inputs[i]).shape);
  }
  std::vector<float> dy(in[0].size());
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : dy) v = dist(rng);
  auto want = RunBatchNormCpu(node, in, shapes, dy, training);
  if (!want.ok()) return ::testing::AssertionFailure() << "CPU: " << want.status();
  auto got = RunBatchNormCuda(node, in, shapes, dy, training);
  if (!got.ok()) return ::testing::AssertionFailure() << "CUDA: " << got.status();
  if (auto ok = Close("Y", 0, got->y, want->y, tol); !ok) return ok;
  for (size_t i = 0; i < in.size(); ++i) {
    if (auto ok = Close("dX", i, got->grads[i], want->grads[i], tol); !ok) return ok;
  }
  const size_t kept = training ? 3 : 2;
  if (got->state.size() != kept || want->state.size() < kept) {
    return ::testing::AssertionFailure() << "state: " << got->state.size() << " CUDA buffers, "
                                         << want->state.size() << " CPU arrays; expected "
                                         << kept;
  }
  for (size_t k = 0; k < kept; ++k) {
    if (auto ok = Close("state", k, got->state[k], want->state[k], tol); !ok) return ok;
  }
  return ::testing::AssertionSuccess();
}

TEST(CudaDenseConvTest, BatchNormTrainingLeavesTheCpuStatisticsForTheRunningUpdate) {
  SKIP_WITHOUT_GPU();
  EXPECT_TRUE(BatchNormMatchesCpuInMode(BatchNormCase({3, 4, 5, 2}), true, 1e-3f));
  EXPECT_TRUE(BatchNormMatchesCpuInMode(BatchNormCase({5, 3}), true, 1e-3f));
}

TEST(CudaDenseConvTest, BatchNormInferenceUsesAndDifferentiatesTheRunningStatistics) {
  SKIP_WITHOUT_GPU();
  EXPECT_TRUE(BatchNormMatchesCpuInMode(BatchNormCase({3, 4, 5, 2}), false, 1e-3f));
  EXPECT_TRUE(BatchNormMatchesCpuInMode(BatchNormCase({5, 3}), false, 1e-3f));
}

TEST(CudaDenseConvTest, BatchNormInferenceRejectsANegativeRunningVarianceByChannel) {
  SKIP_WITHOUT_GPU();
  OpCase c = BatchNormCase({2, 3, 4});
  c.inputs[4].values = {1.0, -0.5, 1.0};
  auto g = cpu::testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const graph::Node& node = g->node(0);
  const auto inputs = cpu::testing::MakeInputs(c);
  auto gpu = memory::CudaMemory::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  std::vector<memory::DeviceAllocation> keep;
  std::vector<Tensor> in;
  for (size_t i = 0; i < 5; ++i) {
    auto b = Upload(**gpu, std::vector<float>(inputs[i].reals.begin(), inputs[i].reals.end()));
    ASSERT_TRUE(b.ok()) << b.status();
    keep.push_back(std::move(*b));
    in.push_back({.shape = g->tensor(node.inputs[i]).shape,
                  .data = static_cast<float*>(keep.back().data())});
  }
  auto y = Upload(**gpu, std::vector<float>(24));
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<Tensor> out = {{.shape = {2, 3, 4}, .data = static_cast<float*>(y->data())}};
  OpState state;
  const absl::Status s =
      Forward(node, in, out, KernelContext{.memory = gpu->get(), .training = false}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(node.name), std::string::npos) << s;
  EXPECT_NE(s.message().find("running_var[1]"), std::string::npos) << s;
}

// ----- Host-side checks (run without a GPU) ----------------------------------------------------

TEST(CudaDenseConvTest, DenseConvPoolAndBatchNormHaveCudaKernels) {
  for (OpKind k : {OpKind::kGemm, OpKind::kMatMul, OpKind::kConv, OpKind::kMaxPool,
                   OpKind::kAveragePool, OpKind::kGlobalAveragePool, OpKind::kBatchNorm}) {
    EXPECT_TRUE(HasCudaKernel(k)) << graph::OpName(k);
  }
}

// Runs the forward of a one-node graph on tensors without data and a context without handles:
// the errors checked here are raised before any device call.
absl::Status ForwardWithoutDevice(const OpCase& c, std::string* name) {
  auto g = cpu::testing::BuildOpGraph(c);
  if (!g.ok()) return g.status();
  const graph::Node& node = g->node(0);
  *name = node.name;
  std::vector<Tensor> in, out;
  for (graph::TensorId t : node.inputs) in.push_back({.shape = g->tensor(t).shape});
  for (graph::TensorId t : node.outputs) out.push_back({.shape = g->tensor(t).shape});
  OpState state;
  return Forward(node, in, out, KernelContext{}, state);
}

TEST(CudaDenseConvTest, ConvWithMoreThanThreeSpatialAxesIsUnimplementedByName) {
  std::string name;
  const absl::Status s = ForwardWithoutDevice(
      {.kind = OpKind::kConv,
       .inputs = {{.shape = {1, 2, 3, 3, 3, 3}}, {.shape = {2, 2, 2, 2, 2, 2}}}},
      &name);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find(name), std::string::npos) << s;
  EXPECT_NE(s.message().find("4 spatial axes"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CPU back-end"), std::string::npos) << s;
}

TEST(CudaDenseConvTest, MissingLibraryHandlesAreErrorsNamingTheNodeAndTheHandle) {
  std::string name;
  absl::Status s = ForwardWithoutDevice(
      {.kind = OpKind::kGemm, .inputs = {{.shape = {2, 3}}, {.shape = {3, 4}}}}, &name);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(name), std::string::npos) << s;
  EXPECT_NE(s.message().find("KernelContext::blas"), std::string::npos) << s;

  s = ForwardWithoutDevice(
      {.kind = OpKind::kMatMul, .inputs = {{.shape = {2, 2, 3}}, {.shape = {3, 4}}}}, &name);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("KernelContext::blas"), std::string::npos) << s;

  s = ForwardWithoutDevice(
      {.kind = OpKind::kConv, .inputs = {{.shape = {1, 2, 5, 5}}, {.shape = {3, 2, 3, 3}}}},
      &name);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(name), std::string::npos) << s;
  EXPECT_NE(s.message().find("KernelContext::dnn"), std::string::npos) << s;
}

}  // namespace
}  // namespace tessera::exec::cuda::testing
