// The execution seam (exec/backend/backend.h) on the CPU: devices by name, the factory, the CPU
// back-end's memory operations and update rules, and the training program and optimizer
// reaching memory only through the back-end they are given.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/backend/cpu_backend.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/node_kernel.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"
#include "tessera/tests/exec/two_layer_mlp.h"

namespace tessera::exec {
namespace {

TEST(BackendTest, DevicesParseByNameAndUnknownOnesAreNamed) {
  EXPECT_EQ(*ParseDevice("cpu"), Device::kCpu);
  EXPECT_EQ(*ParseDevice("cuda"), Device::kCuda);
  EXPECT_EQ(DeviceName(Device::kCuda), "cuda");
  absl::StatusOr<Device> bad = ParseDevice("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "'tpu'")) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "cpu or cuda")) << bad.status();
}

TEST(BackendTest, CoverageHasOneRowPerOpAndTheCpuCoversEvery) {
  const std::vector<OpCoverage> table = KernelCoverage();
  ASSERT_EQ(table.size(), graph::AllOpKinds().size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].kind, graph::AllOpKinds()[i]);
    EXPECT_TRUE(table[i].cpu) << graph::OpName(table[i].kind);
  }
}

TEST(BackendTest, CpuBackendMovesAndCombinesHostArrays) {
  absl::StatusOr<std::unique_ptr<Backend>> made = MakeBackend({.device = Device::kCpu});
  ASSERT_TRUE(made.ok()) << made.status();
  Backend& cpu = **made;
  EXPECT_EQ(cpu.name(), "cpu");
  EXPECT_TRUE(cpu.host_memory());
  std::vector<float> a = {1, 2, 3}, b = {0.5f, -1, 4};
  ASSERT_TRUE(cpu.Accumulate(absl::MakeSpan(a), b).ok());
  EXPECT_EQ(a, (std::vector<float>{1.5f, 1, 7}));
  ASSERT_TRUE(cpu.Scale(absl::MakeSpan(a), 2.f).ok());
  EXPECT_EQ(a, (std::vector<float>{3, 2, 14}));
  ASSERT_TRUE(cpu.Fill(absl::MakeSpan(b), -2.f).ok());
  EXPECT_EQ(b, (std::vector<float>(3, -2.f)));
  std::vector<float> c(3);
  ASSERT_TRUE(cpu.Copy(c.data(), a.data(), 12).ok());
  EXPECT_EQ(c, a);
  absl::Status mismatch = cpu.Accumulate(absl::MakeSpan(a), absl::MakeConstSpan(b).subspan(1));
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kInvalidArgument) << mismatch;
}

TEST(BackendTest, InspectSumsSquaresAndFindsNonFiniteValues) {
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  const std::vector<float> a = {3, 4}, b = {1, -1, 2};
  absl::StatusOr<ArrayStats> s = cpu->Inspect({absl::MakeConstSpan(a), absl::MakeConstSpan(b)},
                                              /*squares=*/true);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->squares, (std::vector<double>{25, 6}));
  EXPECT_TRUE(s->finite);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), -INFINITY}) {
    const std::vector<float> c = {0, bad};
    s = cpu->Inspect({absl::MakeConstSpan(a), absl::MakeConstSpan(c)}, /*squares=*/false);
    ASSERT_TRUE(s.ok());
    EXPECT_FALSE(s->finite) << bad;
    EXPECT_TRUE(s->squares.empty());
  }
}

TEST(BackendTest, UpdateChecksItsStateArrays) {
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  std::vector<float> w = {1, 2}, g = {0.5f, 0.5f};
  const UpdateRule adam = Optimizer::Rule({.kind = OptimizerKind::kAdam}, 0.1, 1);
  EXPECT_EQ(adam.slots(), 2);
  absl::Status s = cpu->Update(adam, absl::MakeSpan(w), g, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(w, (std::vector<float>{1, 2}));  // nothing applied
}

// The optimizer keeps its state in the back-end's memory (a GPU's, on CUDA).
TEST(BackendTest, OptimizerStateLivesInTheBackendsMemory) {
  std::unique_ptr<Backend> cpu = MakeCpuBackend(1);
  std::vector<float> w = {1, 2, 3}, g = {0.1f, 0.2f, 0.3f};
  std::vector<TrainingProgram::Parameter> params = {
      {.name = "w", .value = absl::MakeSpan(w), .grad = absl::MakeSpan(g)}};
  const int64_t before = cpu->memory().bytes_allocated();
  Optimizer adam({.kind = OptimizerKind::kAdam}, *cpu);
  ASSERT_TRUE(adam.Apply(params, 0.1).ok());
  EXPECT_GE(cpu->memory().bytes_allocated() - before, 2 * 3 * 4);  // m and v
  absl::StatusOr<std::map<std::string, Optimizer::State>> state = adam.ReadState();
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->at("w").slots.size(), 2u);
  EXPECT_NEAR(state->at("w").slots[0][2], 0.1 * 0.3, 1e-7);  // m = (1 - b1) g
}

// A program given a back-end allocates its arena, parameters and gradients there, and trains
// exactly as the default one (the same CPU kernels).
TEST(BackendTest, ProgramRunsOnTheBackendItIsGiven) {
  const graph::Graph g = fixtures::TwoLayerMlp({});
  std::shared_ptr<Backend> cpu = MakeCpuBackend(2);
  auto given = TrainingProgram::Create(g, {.seed = 3, .backend = cpu});
  auto plain = TrainingProgram::Create(g, {.seed = 3});
  ASSERT_TRUE(given.ok() && plain.ok()) << given.status();
  EXPECT_EQ(&(*given)->backend(), cpu.get());
  EXPECT_GE(cpu->memory().bytes_allocated(), (*given)->arena_plan().arena_bytes);
  RandomDataSource data(g, {.seed = 9, .classes = 8});
  Batch batch;
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(data.Next(s, batch).ok());
    for (auto* p : {given->get(), plain->get()}) {
      ASSERT_TRUE(SetInputs(*p, batch).ok());
      ASSERT_TRUE(p->RunStep().ok());
    }
    EXPECT_EQ((*given)->Loss(), (*plain)->Loss()) << s;
  }
  for (size_t i = 0; i < (*plain)->parameters().size(); ++i) {
    const auto& a = (*given)->parameters()[i].grad;
    const auto& b = (*plain)->parameters()[i].grad;
    EXPECT_EQ(std::vector<float>(a.begin(), a.end()), std::vector<float>(b.begin(), b.end()));
  }
}

// A back-end without host memory: the CPU one, claiming device memory (and, when asked, to lack
// a Relu kernel), counting its reads to the host.
class DeviceOnlyCpu : public Backend {
 public:
  explicit DeviceOnlyCpu(bool relu = false) : cpu_(MakeCpuBackend(1)), relu_(relu) {}
  int copies_to_host = 0;
  absl::string_view name() const override { return "fake-device"; }
  bool host_memory() const override { return false; }
  memory::DeviceMemory& memory() override { return cpu_->memory(); }
  bool Covers(graph::OpKind kind) const override {
    return relu_ || kind != graph::OpKind::kRelu;
  }
  std::unique_ptr<NodeState> NewNodeState() const override { return cpu_->NewNodeState(); }
  absl::Status Forward(const graph::Node& n, TensorViews in, TensorViews out,
                       const StepContext& ctx, NodeState& s) override {
    return cpu_->Forward(n, in, out, ctx, s);
  }
  absl::Status Backward(const graph::Node& n, TensorViews in, TensorViews out, TensorViews dout,
                        TensorViews din, const StepContext& ctx, const NodeState& s) override {
    return cpu_->Backward(n, in, out, dout, din, ctx, s);
  }
  absl::Status CopyFromHost(void* d, const void* s, int64_t n) override {
    return cpu_->CopyFromHost(d, s, n);
  }
  absl::Status CopyToHost(void* d, const void* s, int64_t n) override {
    ++copies_to_host;
    return cpu_->CopyToHost(d, s, n);
  }
  absl::Status Copy(void* d, const void* s, int64_t n) override { return cpu_->Copy(d, s, n); }
  absl::Status Fill(absl::Span<float> x, float v) override { return cpu_->Fill(x, v); }
  absl::Status Accumulate(absl::Span<float> d, absl::Span<const float> s) override {
    return cpu_->Accumulate(d, s);
  }
  absl::Status Scale(absl::Span<float> x, float f) override { return cpu_->Scale(x, f); }
  absl::StatusOr<ArrayStats> Inspect(absl::Span<const absl::Span<const float>> a,
                                     bool squares) override {
    return cpu_->Inspect(a, squares);
  }
  absl::Status Update(const UpdateRule& r, absl::Span<float> w, absl::Span<const float> g,
                      absl::Span<float* const> slots) override {
    return cpu_->Update(r, w, g, slots);
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }

 private:
  std::unique_ptr<Backend> cpu_;
  bool relu_;
};

// A step reads nothing back to the host; the loss is read when asked, once per step.
TEST(BackendTest, TheLossIsReadBackOnlyWhenAsked) {
  auto device = std::make_shared<DeviceOnlyCpu>(/*relu=*/true);
  const graph::Graph g = fixtures::TwoLayerMlp({});
  auto p = TrainingProgram::Create(g, {.seed = 3, .backend = device});
  auto plain = TrainingProgram::Create(g, {.seed = 3});
  ASSERT_TRUE(p.ok() && plain.ok()) << p.status();
  RandomDataSource data(g, {.seed = 9, .classes = 8});
  Batch batch;
  for (int s = 0; s < 2; ++s) {
    ASSERT_TRUE(data.Next(s, batch).ok());
    ASSERT_TRUE(SetInputs(**p, batch).ok() && SetInputs(**plain, batch).ok());
    device->copies_to_host = 0;
    ASSERT_TRUE((*p)->RunStep().ok());
    ASSERT_TRUE((*plain)->RunStep().ok());
    EXPECT_EQ(device->copies_to_host, 0) << "step " << s;
    EXPECT_EQ((*p)->Loss(), (*plain)->Loss());  // read from the step's own copy
    EXPECT_EQ((*p)->Loss(), (*plain)->Loss());
    EXPECT_EQ(device->copies_to_host, 1) << "step " << s;
  }
}

TEST(BackendTest, OpsWithoutAKernelOnTheBackendAreNamedAtCreate) {
  auto p = TrainingProgram::Create(fixtures::TwoLayerMlp({}),
                                   {.backend = std::make_shared<DeviceOnlyCpu>()});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "without a fake-device kernel yet: Relu"))
      << p.status();
}

TEST(BackendTest, HostOnlyNodeKernelsRefuseDeviceMemoryNamingTheNode) {
  graph::Node node{.name = "fc2", .kind = graph::OpKind::kGemm};
  EXPECT_TRUE(RequireHostMemory(node, *MakeCpuBackend(1)).ok());
  absl::Status s = RequireHostMemory(node, DeviceOnlyCpu());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.message(), "'fc2'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "--device cpu")) << s;
}

}  // namespace
}  // namespace tessera::exec
