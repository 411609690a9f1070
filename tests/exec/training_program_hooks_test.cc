// ProgramOptions' hooks: the loss seed scales every gradient, gradient-ready reports come once
// per parameter per step with the final gradient, and a NodeKernel replaces a node's kernels.
#include <gtest/gtest.h>

#include <random>

#include "absl/strings/match.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;

graph::Graph Mlp() {
  GraphBuilder b("mlp");
  Value x = b.Input("x", {4, 6});
  Value labels = b.Input("labels", {4}, DType::kI64);
  Value h = b.Linear(x, 8, "fc1").Relu("relu");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 5, "fc2"), labels, "loss"));
  return *std::move(b).Build();
}

absl::Status Step(TrainingProgram& p) {
  std::vector<float> x(24);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1, 1);
  for (float& v : x) v = d(rng);
  if (absl::Status s = p.SetInput("x", x); !s.ok()) return s;
  if (absl::Status s = p.SetInput("labels", std::vector<int64_t>{0, 3, 1, 4}); !s.ok()) return s;
  return p.RunStep();
}

std::vector<std::vector<float>> Grads(TrainingProgram& p) {
  std::vector<std::vector<float>> g;
  for (auto& param : p.parameters()) g.emplace_back(param.grad.begin(), param.grad.end());
  return g;
}

TEST(TrainingProgramHooksTest, LossScaleScalesEveryGradient) {
  auto one = TrainingProgram::Create(Mlp(), {.seed = 2});
  auto quarter = TrainingProgram::Create(Mlp(), {.seed = 2, .loss_scale = 0.25f});
  ASSERT_TRUE(one.ok() && quarter.ok());
  ASSERT_TRUE(Step(**one).ok());
  ASSERT_TRUE(Step(**quarter).ok());
  const auto a = Grads(**one), b = Grads(**quarter);
  ASSERT_EQ(a.size(), 4u);
  double max_abs = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t k = 0; k < a[i].size(); ++k) {
      EXPECT_NEAR(b[i][k], 0.25f * a[i][k], 1e-6f);
      max_abs = std::max(max_abs, std::abs(double(a[i][k])));
    }
  }
  EXPECT_GT(max_abs, 1e-3);  // the comparison is not of zeros
}

TEST(TrainingProgramHooksTest, EachGradientIsReportedOnceAndFinalInBackwardOrder) {
  std::vector<size_t> reported;
  std::vector<std::vector<float>> at_report;
  TrainingProgram* program = nullptr;
  ProgramOptions options{.seed = 2};
  options.on_gradient_ready = [&](size_t i) {
    reported.push_back(i);
    const auto& g = program->parameters()[i].grad;
    at_report.emplace_back(g.begin(), g.end());
    return absl::OkStatus();
  };
  auto p = TrainingProgram::Create(Mlp(), options);
  ASSERT_TRUE(p.ok()) << p.status();
  program = p->get();
  ASSERT_TRUE(Step(*program).ok());
  ASSERT_EQ(reported.size(), 4u);
  EXPECT_EQ(reported, program->GradientReadyOrder());
  const auto final_grads = Grads(*program);
  for (size_t k = 0; k < reported.size(); ++k) EXPECT_EQ(at_report[k], final_grads[reported[k]]);
  // fc2's weight and bias are ready before fc1's (backward runs from the loss).
  const auto name = [&](size_t k) { return program->parameters()[reported[k]].name; };
  EXPECT_TRUE(absl::StrContains(name(0), "fc2")) << name(0);
  EXPECT_TRUE(absl::StrContains(name(3), "fc1")) << name(3);
  ASSERT_TRUE(Step(*program).ok());
  EXPECT_EQ(reported.size(), 8u);
}

TEST(TrainingProgramHooksTest, ReportErrorsEndTheStep) {
  ProgramOptions options;
  options.on_gradient_ready = [](size_t) { return absl::UnavailableError("peer 1 is gone"); };
  auto p = TrainingProgram::Create(Mlp(), options);
  ASSERT_TRUE(p.ok());
  const absl::Status s = Step(**p);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
}

// fc2 computed by a NodeKernel that doubles the CPU Gemm's output and its backward.
// It computes through the program's back-end: its kernels and its Scale.
class DoubledGemm : public NodeKernel {
 public:
  absl::Status Forward(const graph::Node& node, Tensors in, Tensors out, Backend& backend,
                       const StepContext& ctx) override {
    if (state_ == nullptr) state_ = backend.NewNodeState();
    if (absl::Status s = backend.Forward(node, in, out, ctx, *state_); !s.ok()) return s;
    ++forwards;
    return backend.Scale({out[0].floats(), static_cast<size_t>(out[0].size())}, 2.f);
  }
  absl::Status Backward(const graph::Node& node, Tensors in, Tensors out, Tensors dout,
                        Tensors din, Backend& backend, const StepContext& ctx) override {
    std::vector<float> twice(dout[0].floats(), dout[0].floats() + dout[0].size());
    for (float& v : twice) v *= 2;
    std::vector<TensorView> d = {dout.begin(), dout.end()};
    d[0].data = twice.data();
    ++backwards;
    return backend.Backward(node, in, out, d, din, ctx, *state_);
  }
  int forwards = 0, backwards = 0;

 private:
  std::unique_ptr<NodeState> state_;
};

TEST(TrainingProgramHooksTest, NodeKernelReplacesTheCpuKernel) {
  auto kernel = std::make_shared<DoubledGemm>();
  ProgramOptions options{.seed = 2};
  options.node_kernels["fc2"] = kernel;
  auto custom = TrainingProgram::Create(Mlp(), options);
  auto plain = TrainingProgram::Create(Mlp(), {.seed = 2});
  ASSERT_TRUE(custom.ok() && plain.ok()) << custom.status();
  ASSERT_TRUE(Step(**custom).ok());
  ASSERT_TRUE(Step(**plain).ok());
  EXPECT_EQ(kernel->forwards, 1);
  EXPECT_EQ(kernel->backwards, 1);
  EXPECT_NE((*custom)->Loss(), (*plain)->Loss());  // logits doubled
}

TEST(TrainingProgramHooksTest, UnknownNodeKernelNameIsRefused) {
  ProgramOptions options;
  options.node_kernels["fc9"] = std::make_shared<DoubledGemm>();
  auto p = TrainingProgram::Create(Mlp(), options);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "'fc9'")) << p.status();
}

}  // namespace
}  // namespace tessera::exec
