// The CUDA back-end of the execution seam (exec/cuda/backend.h) against the CPU back-end
// (exec::MakeCpuBackend) on the same inputs: memory operations, Inspect, the optimizer's
// updates, and nodes' forward and backward through the Backend interface. GPU tests skip where
// no GPU is present ("no GPU present: compiled, not run"); the factory's errors are checked
// everywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "tessera/exec/backend/backend.h"
#include "tessera/exec/backend/cpu_backend.h"
#include "tessera/exec/cuda/backend.h"
#include "tessera/tests/cuda/cuda_op_test_util.h"

namespace tessera::exec::cuda::testing {
namespace {

using costmodel::OptimizerKind;
using graph::OpKind;
using ::testing::HasSubstr;
using Floats = std::vector<std::vector<float>>;

// Arrays in one back-end's memory, freed with this object (which must die before the back-end).
class Arrays {
 public:
  explicit Arrays(Backend& be) : be_(be) {}
  absl::StatusOr<void*> AddBytes(const void* host, int64_t bytes) {
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation a, memory::DeviceAllocation::Create(
                                                        be_.memory(), std::max<int64_t>(bytes, 8),
                                                        /*alignment=*/256));
    void* data = a.data();
    keep_.push_back(std::move(a));
    TS_RETURN_IF_ERROR(be_.CopyFromHost(data, host, bytes));
    return data;
  }
  absl::StatusOr<absl::Span<float>> Add(const std::vector<float>& values) {
    TS_ASSIGN_OR_RETURN(void* data, AddBytes(values.data(), values.size() * sizeof(float)));
    return absl::Span<float>(static_cast<float*>(data), values.size());
  }

 private:
  Backend& be_;
  std::vector<memory::DeviceAllocation> keep_;
};

std::vector<float> Random(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Both the tensors' values agree: |got - want| <= tol * max(|want|, the RMS of want), so that
// values near zero are judged on the array's scale.
::testing::AssertionResult NearRelative(const std::vector<float>& got,
                                        const std::vector<float>& want, double tol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  double rms = 0;
  for (float w : want) rms += static_cast<double>(w) * w;
  rms = want.empty() ? 0 : std::sqrt(rms / want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    if (!(std::abs(got[k] - want[k]) <= tol * std::max<double>(std::abs(want[k]), rms))) {
      return ::testing::AssertionFailure() << "[" << k << "]: CUDA " << got[k] << ", CPU "
                                           << want[k];
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(CudaBackendTest, MakeBackendNeedsAGpuAndAnExistingDevice) {
  const bool gpu = base::CudaDeviceCount() > 0;
  absl::StatusOr<std::unique_ptr<Backend>> be = MakeBackend({.device = Device::kCuda});
  if (!gpu) {
    ASSERT_EQ(be.status().code(), absl::StatusCode::kFailedPrecondition) << be.status();
    EXPECT_THAT(be.status().message(), HasSubstr("no CUDA device"));
  } else {
    ASSERT_TRUE(be.ok()) << be.status();
    EXPECT_EQ((*be)->name(), "cuda");
    EXPECT_FALSE((*be)->host_memory());
    EXPECT_EQ((*be)->memory().name(), "cached cuda");  // memory/cached_memory.h over CudaMemory
    EXPECT_TRUE((*be)->Covers(OpKind::kGemm));
    EXPECT_EQ((*be)->Covers(OpKind::kConv), HasCudaKernel(OpKind::kConv));
    EXPECT_TRUE((*be)->Synchronize().ok());
  }
  be = MakeBackend({.device = Device::kCuda, .cuda_device = 1 << 20});
  ASSERT_EQ(be.status().code(), absl::StatusCode::kFailedPrecondition) << be.status();
  EXPECT_THAT(be.status().message(), HasSubstr(gpu ? "out of range" : "no CUDA device"));
}

// Fill, Accumulate, Scale and Copy on one back-end: the arrays' values afterwards.
absl::StatusOr<Floats> RunMemoryOps(Backend& be, size_t n) {
  Arrays arrays(be);
  TS_ASSIGN_OR_RETURN(absl::Span<float> x, arrays.Add(Random(n, 1)));
  TS_ASSIGN_OR_RETURN(absl::Span<float> y, arrays.Add(Random(n, 2)));
  TS_ASSIGN_OR_RETURN(absl::Span<float> z, arrays.Add(std::vector<float>(n)));
  TS_ASSIGN_OR_RETURN(absl::Span<float> c, arrays.Add(std::vector<float>(n)));
  TS_RETURN_IF_ERROR(be.Fill(z, 1.5f));
  TS_RETURN_IF_ERROR(be.Accumulate(x, y));
  TS_RETURN_IF_ERROR(be.Accumulate(z, x));
  TS_RETURN_IF_ERROR(be.Scale(x, -0.375f));
  TS_RETURN_IF_ERROR(be.Copy(c.data(), x.data(), n * sizeof(float)));  // after the Scale
  TS_RETURN_IF_ERROR(be.Scale(c, 3.f));
  Floats out;
  for (absl::Span<float> a : {x, y, z, c}) {
    TS_ASSIGN_OR_RETURN(out.emplace_back(), ReadFloats(be, a));
  }
  return out;
}

TEST(CudaBackendTest, FillAccumulateScaleAndCopyEqualTheCpus) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{70001}}) {
    auto want = RunMemoryOps(*cpu, n);
    auto got = RunMemoryOps(**gpu, n);
    ASSERT_TRUE(want.ok() && got.ok()) << want.status() << " " << got.status();
    EXPECT_EQ(*got, *want) << "n = " << n;  // one rounding per value on both: bit for bit
  }
}

TEST(CudaBackendTest, CopiesRoundTripAndHostBuffersMayBeReusedAtOnce) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  Arrays arrays(**gpu);
  std::vector<int64_t> ints = {1, -2, int64_t{1} << 40, 7};
  auto a = arrays.AddBytes(ints.data(), ints.size() * sizeof(int64_t));
  ASSERT_TRUE(a.ok()) << a.status();
  ints.assign(ints.size(), 0);  // reused at once: the device copy has what was there before
  auto b = arrays.AddBytes(ints.data(), ints.size() * sizeof(int64_t));
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE((*gpu)->Copy(*b, *a, 2 * sizeof(int64_t)).ok());  // the first two values
  std::vector<int64_t> back(ints.size(), -1);
  ASSERT_TRUE((*gpu)->CopyToHost(back.data(), *b, back.size() * sizeof(int64_t)).ok());
  EXPECT_EQ(back, (std::vector<int64_t>{1, -2, 0, 0}));
  ASSERT_TRUE((*gpu)->CopyToHost(back.data(), *a, 0).ok());  // 0 bytes: nothing to do
  ASSERT_TRUE((*gpu)->Copy(*a, *a, 16).ok());
  const absl::Status overlap =
      (*gpu)->Copy(static_cast<char*>(*a) + 8, *a, 3 * sizeof(int64_t));
  EXPECT_EQ(overlap.code(), absl::StatusCode::kInvalidArgument) << overlap;
}

// More elements than one grid covers (65535 blocks of 256): the loops stride over the rest.
TEST(CudaBackendTest, KernelsCoverArraysLargerThanTheirGrid) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const size_t n = size_t{65535} * 256 + 1000;
  Arrays arrays(**gpu);
  auto x = arrays.Add(std::vector<float>(n));
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE((*gpu)->Fill(*x, 2.f).ok());
  ASSERT_TRUE((*gpu)->Scale(*x, 0.5f).ok());
  auto stats = (*gpu)->Inspect({absl::Span<const float>(*x)}, /*squares=*/true);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->squares.size(), 1u);
  EXPECT_EQ(stats->squares[0], static_cast<double>(n));  // sums of 1.0: exact in double
  EXPECT_TRUE(stats->finite);
}

TEST(CudaBackendTest, SizeMismatchesAreInvalidArguments) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  Arrays arrays(**gpu);
  auto a = arrays.Add(std::vector<float>(3));
  auto b = arrays.Add(std::vector<float>(4));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*gpu)->Accumulate(*a, *b).code(), absl::StatusCode::kInvalidArgument);
  const UpdateRule sgd{.kind = OptimizerKind::kSgd, .lr = 0.1f};
  EXPECT_EQ((*gpu)->Update(sgd, *a, *b, {}).code(), absl::StatusCode::kInvalidArgument);
  const UpdateRule adam{.kind = OptimizerKind::kAdam, .lr = 0.1f};
  float* one[] = {a->data()};
  EXPECT_EQ((*gpu)->Update(adam, *a, *a, one).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*gpu)->Synchronize().ok());
}

absl::StatusOr<ArrayStats> RunInspect(Backend& be, const Floats& values, bool squares) {
  Arrays arrays(be);
  std::vector<absl::Span<const float>> spans;
  for (const std::vector<float>& v : values) {
    TS_ASSIGN_OR_RETURN(absl::Span<float> s, arrays.Add(v));
    spans.push_back(s);
  }
  return be.Inspect(spans, squares);
}

TEST(CudaBackendTest, InspectSumsSquaresInDoubleAndFindsNonFiniteValues) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  Floats values = {Random(1000, 3), {}, Random(1, 4), Random(300001, 5, -30, 30)};
  auto want = RunInspect(*cpu, values, true);
  auto got = RunInspect(**gpu, values, true);
  ASSERT_TRUE(want.ok() && got.ok()) << want.status() << " " << got.status();
  ASSERT_EQ(got->squares.size(), values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    EXPECT_NEAR(got->squares[k], want->squares[k], 1e-9 * want->squares[k]) << "array " << k;
  }
  EXPECT_TRUE(got->finite && want->finite);
  got = RunInspect(**gpu, values, false);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->squares.empty());
  EXPECT_TRUE(got->finite);
  const float kBad[] = {std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()};
  for (float bad : kBad) {
    for (bool squares : {false, true}) {
      Floats poisoned = values;
      poisoned[3][123457] = bad;
      got = RunInspect(**gpu, poisoned, squares);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_FALSE(got->finite) << bad;
      auto reference = RunInspect(*cpu, poisoned, squares);
      ASSERT_TRUE(reference.ok()) << reference.status();
      EXPECT_FALSE(reference->finite) << bad;
    }
  }
}

// One step's constants as exec/optimizer.h computes them: in double, rounded once.
UpdateRule Rule(OptimizerKind kind, int step) {
  const double lr = 0.05, wd = 0.01, b1 = 0.9, b2 = 0.999;
  return {.kind = kind, .lr = static_cast<float>(lr), .weight_decay = static_cast<float>(wd),
          .momentum = 0.9f, .epsilon = 1e-8f, .beta1 = static_cast<float>(b1),
          .beta2 = static_cast<float>(b2), .one_minus_beta1 = static_cast<float>(1 - b1),
          .one_minus_beta2 = static_cast<float>(1 - b2),
          .step_size = static_cast<float>(lr / (1 - std::pow(b1, step))),
          .inv_sqrt_c2 = static_cast<float>(1 / std::sqrt(1 - std::pow(b2, step))),
          .decay = static_cast<float>(lr * wd)};
}

// Five updates of one parameter array from fresh gradients: w, then the state arrays.
absl::StatusOr<Floats> RunUpdates(Backend& be, OptimizerKind kind) {
  const size_t n = 5000;
  Arrays arrays(be);
  TS_ASSIGN_OR_RETURN(absl::Span<float> w, arrays.Add(Random(n, 11)));
  TS_ASSIGN_OR_RETURN(absl::Span<float> g, arrays.Add(std::vector<float>(n)));
  std::vector<absl::Span<float>> state;
  std::vector<float*> slots;
  for (int s = 0; s < UpdateRule{.kind = kind}.slots(); ++s) {
    TS_ASSIGN_OR_RETURN(state.emplace_back(), arrays.Add(std::vector<float>(n)));
    slots.push_back(state.back().data());
  }
  for (int step = 1; step <= 5; ++step) {
    TS_RETURN_IF_ERROR(WriteFloats(be, g, Random(n, 100 + step)));
    TS_RETURN_IF_ERROR(be.Update(Rule(kind, step), w, g, slots));
  }
  Floats out;
  TS_ASSIGN_OR_RETURN(out.emplace_back(), ReadFloats(be, w));
  for (absl::Span<float> s : state) {
    TS_ASSIGN_OR_RETURN(out.emplace_back(), ReadFloats(be, s));
  }
  return out;
}

TEST(CudaBackendTest, UpdatesMatchTheCpuForEveryRule) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam}) {
    auto want = RunUpdates(*cpu, kind);
    auto got = RunUpdates(**gpu, kind);
    ASSERT_TRUE(want.ok() && got.ok()) << want.status() << " " << got.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t k = 0; k < got->size(); ++k) {
      EXPECT_TRUE(NearRelative((*got)[k], (*want)[k], 1e-6))
          << costmodel::OptimizerName(kind) << (k == 0 ? " w" : " state ") << k;
    }
  }
}

// What one node's forward and backward left: outputs, input gradients (empty where none) and
// the floating inputs afterwards (BatchNormalization's running statistics).
struct NodeRun {
  Floats outputs, grads, inputs;
};

absl::StatusOr<TensorView> UploadTensor(Arrays& arrays, const graph::Tensor& t,
                                        const cpu::testing::Storage& values) {
  TensorView v{.shape = t.shape, .dtype = t.dtype};
  if (cpu::testing::IsIntegral(t.dtype)) {  // as int64, like the CPU kernels' tests
    v.dtype = graph::DType::kI64;
    TS_ASSIGN_OR_RETURN(v.data, arrays.AddBytes(values.ints.data(),
                                                values.ints.size() * sizeof(int64_t)));
    return v;
  }
  TS_ASSIGN_OR_RETURN(absl::Span<float> s,
                      arrays.Add(std::vector<float>(values.reals.begin(), values.reals.end())));
  v.data = s.data();
  return v;
}

absl::StatusOr<std::vector<float>> Read(Backend& be, const TensorView& v) {
  return ReadFloats(be, {v.floats(), static_cast<size_t>(v.size())});
}

absl::StatusOr<NodeRun> RunNode(Backend& be, const cpu::testing::OpCase& c,
                                const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(const graph::Graph g, cpu::testing::BuildOpGraph(c));
  const graph::Node& node = g.node(0);
  const std::vector<cpu::testing::Storage> values = cpu::testing::MakeInputs(c);
  Arrays arrays(be);
  std::vector<TensorView> in(node.inputs.size()), din(node.inputs.size()), out, dout;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == graph::kNoTensor) continue;
    TS_ASSIGN_OR_RETURN(in[i], UploadTensor(arrays, g.tensor(node.inputs[i]), values[i]));
    din[i] = TensorView{.shape = in[i].shape, .dtype = in[i].dtype};
    if (!graph::IsFloating(in[i].dtype)) continue;
    TS_ASSIGN_OR_RETURN(absl::Span<float> d, arrays.Add(std::vector<float>(in[i].size())));
    din[i].data = d.data();
  }
  for (size_t j = 0; j < node.outputs.size(); ++j) {
    const graph::Tensor& t = g.tensor(node.outputs[j]);
    const size_t n = cpu::testing::NumElements(t.shape);
    TS_ASSIGN_OR_RETURN(absl::Span<float> y, arrays.Add(std::vector<float>(n)));
    TS_ASSIGN_OR_RETURN(absl::Span<float> dy, arrays.Add(Random(n, c.seed + 7 + j)));
    out.push_back({.shape = t.shape, .data = y.data()});
    dout.push_back({.shape = t.shape, .data = dy.data()});
  }
  std::unique_ptr<NodeState> state = be.NewNodeState();
  TS_RETURN_IF_ERROR(be.Forward(node, in, out, ctx, *state));
  TS_RETURN_IF_ERROR(be.Backward(node, in, out, dout, din, ctx, *state));
  NodeRun run;
  for (const TensorView& y : out) {
    TS_ASSIGN_OR_RETURN(run.outputs.emplace_back(), Read(be, y));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    run.grads.emplace_back();
    run.inputs.emplace_back();
    if (!din[i].present()) continue;
    TS_ASSIGN_OR_RETURN(run.grads.back(), Read(be, din[i]));
    TS_ASSIGN_OR_RETURN(run.inputs.back(), Read(be, in[i]));
  }
  return run;
}

::testing::AssertionResult NodeMatchesCpu(Backend& gpu, const cpu::testing::OpCase& c,
                                          const StepContext& ctx, float tol = 1e-4f) {
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  auto want = RunNode(*cpu, c, ctx);
  if (!want.ok()) return ::testing::AssertionFailure() << "CPU: " << want.status();
  auto got = RunNode(gpu, c, ctx);
  if (!got.ok()) return ::testing::AssertionFailure() << "CUDA: " << got.status();
  for (size_t j = 0; j < got->outputs.size(); ++j) {
    if (auto ok = Close("Y", j, got->outputs[j], want->outputs[j], tol); !ok) return ok;
  }
  for (size_t i = 0; i < got->grads.size(); ++i) {
    if (auto ok = Close("dX", i, got->grads[i], want->grads[i], tol); !ok) return ok;
    if (auto ok = Close("X after", i, got->inputs[i], want->inputs[i], tol); !ok) return ok;
  }
  return ::testing::AssertionSuccess();
}

TEST(CudaBackendTest, NodesMatchTheCpuThroughTheBackendInterface) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const StepContext ctx{.training = true, .seed = 42, .step = 3};
  EXPECT_TRUE(NodeMatchesCpu(
      **gpu,
      {.kind = OpKind::kGemm, .attrs = graph::GemmAttrs{.trans_b = true, .alpha = 0.7, .beta = 1.3},
       .inputs = {{.shape = {4, 6}}, {.shape = {5, 6}}, {.shape = {5}}}},
      ctx));
  EXPECT_TRUE(NodeMatchesCpu(**gpu, {.kind = OpKind::kRelu, .inputs = {{.shape = {3, 7}}}}, ctx));
  EXPECT_TRUE(NodeMatchesCpu(**gpu,
                             {.kind = OpKind::kSoftmaxCrossEntropy,
                              .inputs = {{.shape = {4, 5}},
                                         {.shape = {4}, .dtype = graph::DType::kI64,
                                          .values = {0, 4, 2, 1}}}},
                             ctx));
  // The mask comes from (seed, node, step): the same on both back-ends.
  EXPECT_TRUE(NodeMatchesCpu(**gpu,
                             {.kind = OpKind::kDropout, .attrs = graph::ScalarAttrs{.alpha = 0.3},
                              .inputs = {{.shape = {8, 33}}}},
                             ctx));
}

TEST(CudaBackendTest, BatchNormUpdatesTheRunningStatisticsInTraining) {
  SKIP_WITHOUT_GPU();
  auto gpu = MakeCudaBackend({});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const cpu::testing::OpCase c{
      .kind = OpKind::kBatchNorm,
      .attrs = graph::BatchNormAttrs{.epsilon = 1e-3, .momentum = 0.8},
      .inputs = {{.shape = {4, 3, 5, 5}, .lo = -2, .hi = 3},
                 {.shape = {3}, .lo = 0.5, .hi = 2},
                 {.shape = {3}},
                 {.shape = {3}, .role = graph::TensorRole::kConstant},
                 {.shape = {3}, .lo = 0.1, .hi = 2, .role = graph::TensorRole::kConstant}}};
  for (bool training : {true, false}) {
    const StepContext ctx{.training = training};
    EXPECT_TRUE(NodeMatchesCpu(**gpu, c, ctx, 1e-3f)) << "training " << training;
    // In training the statistics moved (0.8 old + 0.2 batch); in inference they stay.
    auto run = RunNode(**gpu, c, ctx);
    ASSERT_TRUE(run.ok()) << run.status();
    const std::vector<cpu::testing::Storage> initial = cpu::testing::MakeInputs(c);
    for (int k = 3; k < 5; ++k) {
      const std::vector<float> before(initial[k].reals.begin(), initial[k].reals.end());
      EXPECT_EQ(run->inputs[k] != before, training) << "input " << k;
    }
  }
}

}  // namespace
}  // namespace tessera::exec::cuda::testing
