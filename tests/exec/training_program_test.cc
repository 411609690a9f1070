// The single-worker training step: gradients of whole models against central differences,
// in-place sharing changes nothing, SGD learns, and errors name what is wrong.
#include "tessera/exec/training_program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "absl/strings/match.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/shape_inference.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/exec/data_source.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;

// x -> fc1 -> relu -> (reshape round trip) -> fc2 -> sigmoid * 2 + residual from fc1 -> fc3 -> loss
graph::Graph Mlp(int64_t batch) {
  GraphBuilder b("mlp");
  Value x = b.Input("x", {batch, 6});
  Value labels = b.Input("labels", {batch}, DType::kI64);
  Value h1 = b.Linear(x, 8, "fc1");
  Value r = h1.Relu("relu").Reshape({batch, 2, 4}, "split").Reshape({batch, 8}, "merge");
  Value h2 = b.Add(b.Linear(r, 8, "fc2").Sigmoid("sig"), h1, "residual");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h2, 5, "fc3"), labels, "loss"));
  return *std::move(b).Build();
}

struct Batch {
  std::vector<float> x;
  std::vector<int64_t> labels;
};

Batch MakeBatch(int64_t batch, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  Batch b;
  for (int64_t i = 0; i < batch * 6; ++i) b.x.push_back(d(rng));
  for (int64_t i = 0; i < batch; ++i) b.labels.push_back((i * 3 + seed) % 5);
  return b;
}

absl::StatusOr<float> LossAt(TrainingProgram& p, const Batch& b) {
  if (absl::Status s = p.SetInput("x", b.x); !s.ok()) return s;
  if (absl::Status s = p.SetInput("labels", b.labels); !s.ok()) return s;
  if (absl::Status s = p.RunForward(true); !s.ok()) return s;
  return p.Loss();
}

TEST(TrainingProgramTest, GradientsMatchCentralDifferences) {
  auto p = TrainingProgram::Create(Mlp(4), {.seed = 3});
  ASSERT_TRUE(p.ok()) << p.status();
  const Batch b = MakeBatch(4, 1);
  ASSERT_TRUE((*p)->SetInput("x", b.x).ok());
  ASSERT_TRUE((*p)->SetInput("labels", b.labels).ok());
  ASSERT_TRUE((*p)->RunStep().ok());
  const float loss = (*p)->Loss();
  EXPECT_GT(loss, 0.f);
  ASSERT_EQ((*p)->parameters().size(), 6u);  // 3 weights, 3 biases
  for (TrainingProgram::Parameter& param : (*p)->parameters()) {
    const std::vector<float> grad(param.grad.begin(), param.grad.end());
    for (size_t k = 0; k < param.value.size(); k += 3) {
      const float saved = param.value[k];
      const float eps = 1e-2f;
      param.value[k] = saved + eps;
      auto plus = LossAt(**p, b);
      param.value[k] = saved - eps;
      auto minus = LossAt(**p, b);
      param.value[k] = saved;
      ASSERT_TRUE(plus.ok() && minus.ok());
      const double numeric = (*plus - *minus) / (2.0 * eps);
      EXPECT_NEAR(grad[k], numeric, 2e-3 + 2e-2 * std::abs(numeric)) << param.name << "[" << k << "]";
    }
  }
}

TEST(TrainingProgramTest, InPlaceSharingGivesTheSameGradientsAsNone) {
  const Batch b = MakeBatch(8, 2);
  std::vector<std::vector<float>> grads[2];
  float losses[2];
  int64_t arenas[2];
  for (int in_place = 0; in_place < 2; ++in_place) {
    auto p = TrainingProgram::Create(Mlp(8), {.seed = 5, .in_place = in_place == 1});
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE((*p)->SetInput("x", b.x).ok());
    ASSERT_TRUE((*p)->SetInput("labels", b.labels).ok());
    ASSERT_TRUE((*p)->RunStep().ok());
    losses[in_place] = (*p)->Loss();
    arenas[in_place] = (*p)->arena_plan().arena_bytes;
    for (auto& param : (*p)->parameters()) grads[in_place].emplace_back(param.grad.begin(), param.grad.end());
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(grads[0], grads[1]);
  EXPECT_LT(arenas[1], arenas[0]);  // sharing saves memory
}

// A weight normalised by its own norm, u = v / sqrt(sum(v * v)) (gnmt's attention vector), and
// a vector divided by its sum (gradient 0): parameter derivations whose backward reads their
// outputs. Sqrt's output once lived only through the forward, so its memory held its own
// gradient by the backward and the gradient of v came out as exactly v.
TEST(TrainingProgramTest, GradientsThroughAWeightNormalisationMatchCentralDifferences) {
  GraphBuilder b("normalised");
  Value x = b.Input("x", {4, 6});
  Value v = b.Parameter("v", {6});
  Value w = b.Parameter("w", {6});
  Value u = b.Div(v, b.ReduceSum(b.Mul(v, v), {}, true).Sqrt());
  Value share = b.Div(w, b.ReduceSum(w, {}, true));
  b.Output(b.ReduceSum(b.Add(b.Mul(b.MatMul(x, u), b.MatMul(x, u)), b.MatMul(x, share)), {}, false));
  const graph::Graph g = *std::move(b).Build();
  std::vector<float> xs(24);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(1.7f * static_cast<float>(i));
  for (bool in_place : {false, true}) {
    auto p = TrainingProgram::Create(g, {.seed = 3, .in_place = in_place});
    ASSERT_TRUE(p.ok()) << p.status();
    for (const char* name : {"v", "w"}) {
      std::vector<float> init(6);
      for (int i = 0; i < 6; ++i) init[i] = 0.2f * static_cast<float>(i + 1) * (i % 2 ? -1.f : 1.f);
      if (name[0] == 'w') init[0] += 1.f;  // a sum away from 0
      ASSERT_TRUE((*p)->SetPersistentValue(name, init).ok());
    }
    ASSERT_TRUE((*p)->SetInput("x", xs).ok());
    ASSERT_TRUE((*p)->RunStep().ok());
    for (TrainingProgram::Parameter& param : (*p)->parameters()) {
      const std::vector<float> grad(param.grad.begin(), param.grad.end());
      for (size_t k = 0; k < param.value.size(); ++k) {
        const float saved = param.value[k];
        const float eps = 1e-2f;
        double loss[2];
        for (int s = 0; s < 2; ++s) {
          param.value[k] = saved + (s == 0 ? -eps : eps);
          ASSERT_TRUE((*p)->SetInput("x", xs).ok());
          ASSERT_TRUE((*p)->RunForward(true).ok());
          loss[s] = (*p)->Loss();
        }
        param.value[k] = saved;
        const double numeric = (loss[1] - loss[0]) / (2.0 * eps);
        EXPECT_NEAR(grad[k], numeric, 2e-3 + 2e-2 * std::abs(numeric))
            << param.name << "[" << k << "], in place " << in_place;
      }
    }
  }
}

TEST(TrainingProgramTest, SgdLearnsAFixedBatch) {
  auto p = TrainingProgram::Create(Mlp(16), {.seed = 7});
  ASSERT_TRUE(p.ok()) << p.status();
  const Batch b = MakeBatch(16, 3);
  float first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    ASSERT_TRUE((*p)->SetInput("x", b.x).ok());
    ASSERT_TRUE((*p)->SetInput("labels", b.labels).ok());
    ASSERT_TRUE((*p)->RunStep().ok());
    if (step == 0) first = (*p)->Loss();
    last = (*p)->Loss();
    for (auto& param : (*p)->parameters()) {
      for (size_t k = 0; k < param.value.size(); ++k) param.value[k] -= 0.5f * param.grad[k];
    }
  }
  EXPECT_EQ((*p)->steps_run(), 150);
  EXPECT_LT(last, 0.3f * first) << "first " << first << " last " << last;
}

// A small CNN (conv, batch norm, Tanh in place, max-pool, residual add, flatten view) and a
// recurrent model (embedding, bi-LSTM, per-step linear): gradients against central differences,
// and in-place sharing changes nothing.
graph::Graph Cnn() {
  GraphBuilder b("cnn");
  Value x = b.Input("x", {2, 2, 6, 6});
  Value labels = b.Input("labels", {2}, DType::kI64);
  // Tanh, not ReLU: central differences across a ReLU kink are meaningless.
  Value h = b.BatchNorm2d(b.Conv2d(x, 4, 3, "conv1", {.padding = 1}), "bn1").Tanh("act1");
  Value r = b.Add(b.Conv2d(h, 4, 3, "conv2", {.padding = 1}), h, "residual").Tanh("act2");
  // Average pooling: after a saturated Tanh, max-pool windows hold near-ties that central
  // differences cannot resolve (MaxPoolNet below checks max-pool on unsaturated values).
  Value p = b.AvgPool2d(r, 2, "pool").Flatten(1, "flat");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(p, 3, "fc"), labels, "loss"));
  return *std::move(b).Build();
}

graph::Graph MaxPoolNet() {
  GraphBuilder b("maxpool");
  Value x = b.Input("x", {2, 2, 6, 6});
  Value labels = b.Input("labels", {2}, DType::kI64);
  Value h = b.MaxPool2d(b.Conv2d(x, 4, 3, "conv", {.padding = 1}), 2, "pool").Flatten(1, "flat");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 3, "fc"), labels, "loss"));
  return *std::move(b).Build();
}

graph::Graph Recurrent() {
  GraphBuilder b("rnn");
  Value ids = b.Input("ids", {5, 2}, DType::kI64);        // [T, B]
  Value labels = b.Input("labels", {10}, DType::kI64);     // one per (t, b)
  Value e = b.Embedding(ids, 7, 4, "embed");                // [T, B, 4]
  Value h = b.Lstm(e, 3, "lstm", {.bidirectional = true});  // [T, B, 6]
  Value logits = b.Linear(h.Reshape({10, 6}, "frames"), 7, "out");
  b.Output(b.SoftmaxCrossEntropy(logits, labels, "loss"));
  return *std::move(b).Build();
}

// Largest |analytic - numeric| / (0.01 + |numeric|) over every parameter element (float32,
// eps 1e-3: small enough that max-pool's arg-max rarely switches).
double MaxGradientError(TrainingProgram& p, const std::function<void()>& set_inputs) {
  set_inputs();
  EXPECT_TRUE(p.RunStep().ok());
  double worst = 0;
  for (TrainingProgram::Parameter& param : p.parameters()) {
    const std::vector<float> grad(param.grad.begin(), param.grad.end());
    for (size_t k = 0; k < param.value.size(); ++k) {
      const float saved = param.value[k];
      const auto loss = [&](float v) {
        param.value[k] = v;
        set_inputs();
        EXPECT_TRUE(p.RunForward(true).ok());
        return static_cast<double>(p.Loss());
      };
      const double numeric = (loss(saved + 1e-3f) - loss(saved - 1e-3f)) / 2e-3;
      param.value[k] = saved;
      const double err = std::abs(grad[k] - numeric) / (1e-2 + std::abs(numeric));
      worst = std::max(worst, err);
    }
  }
  return worst;
}

TEST(TrainingProgramTest, CnnAndLstmGradientsMatchAndInPlaceChangesNothing) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> images(2 * 2 * 6 * 6);
  for (float& v : images) v = d(rng);
  std::vector<int64_t> ids, tokens;
  for (int i = 0; i < 10; ++i) ids.push_back((i * 3) % 7), tokens.push_back((i * 5 + 1) % 7);
  struct Case {
    graph::Graph graph;
    std::function<void(TrainingProgram&)> set;
  };
  std::vector<Case> cases;
  cases.push_back({Cnn(), [&](TrainingProgram& p) {
                     ASSERT_TRUE(p.SetInput("x", images).ok());
                     ASSERT_TRUE(p.SetInput("labels", std::vector<int64_t>{0, 2}).ok());
                   }});
  cases.push_back({MaxPoolNet(), [&](TrainingProgram& p) {
                     ASSERT_TRUE(p.SetInput("x", images).ok());
                     ASSERT_TRUE(p.SetInput("labels", std::vector<int64_t>{1, 0}).ok());
                   }});
  cases.push_back({Recurrent(), [&](TrainingProgram& p) {
                     ASSERT_TRUE(p.SetInput("ids", ids).ok());
                     ASSERT_TRUE(p.SetInput("labels", tokens).ok());
                   }});
  for (Case& c : cases) {
    std::vector<std::vector<float>> grads[2];
    for (int in_place = 0; in_place < 2; ++in_place) {
      auto p = TrainingProgram::Create(c.graph, {.seed = 9, .in_place = in_place == 1});
      ASSERT_TRUE(p.ok()) << p.status();
      if (in_place == 1) {
        EXPECT_LT(MaxGradientError(**p, [&] { c.set(**p); }), 3e-2) << c.graph.name();
      }
      c.set(**p);
      ASSERT_TRUE((*p)->RunStep().ok());
      for (auto& param : (*p)->parameters()) grads[in_place].emplace_back(param.grad.begin(), param.grad.end());
    }
    EXPECT_EQ(grads[0], grads[1]) << c.graph.name();
  }
}

TEST(TrainingProgramTest, TrainingForwardUpdatesBatchNormRunningStatistics) {
  GraphBuilder b("bn");
  Value x = b.Input("x", {4, 2, 1, 1});
  Value labels = b.Input("labels", {4}, DType::kI64);
  Value h = b.BatchNorm2d(x, "bn", {.momentum = 0.1}).Flatten(1, "flat");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 2, "fc"), labels, "loss"));
  auto p = TrainingProgram::Create(*std::move(b).Build(), {});
  ASSERT_TRUE(p.ok()) << p.status();
  // Channel 0: 1, 2, 3, 4 (mean 2.5, unbiased variance 5/3); channel 1: all 7 (variance 0).
  const std::vector<float> values = {1, 7, 2, 7, 3, 7, 4, 7};
  ASSERT_TRUE((*p)->SetInput("x", values).ok());
  ASSERT_TRUE((*p)->SetInput("labels", std::vector<int64_t>{0, 1, 0, 1}).ok());
  ASSERT_TRUE((*p)->RunStep().ok());
  // PyTorch momentum 0.1: running = 0.9 * running + 0.1 * batch, from mean 0 and variance 1.
  const std::vector<float> mean = (*p)->PersistentValue("bn.running_mean");
  const std::vector<float> var = (*p)->PersistentValue("bn.running_var");
  ASSERT_EQ(mean.size(), 2u);
  ASSERT_EQ(var.size(), 2u);
  EXPECT_NEAR(mean[0], 0.25, 1e-6);
  EXPECT_NEAR(mean[1], 0.7, 1e-6);
  EXPECT_NEAR(var[0], 0.9 + 0.1 * 5.0 / 3.0, 1e-6);
  EXPECT_NEAR(var[1], 0.9, 1e-6);
  ASSERT_TRUE((*p)->SetInput("x", values).ok());
  ASSERT_TRUE((*p)->SetInput("labels", std::vector<int64_t>{0, 1, 0, 1}).ok());
  ASSERT_TRUE((*p)->RunForward(/*training=*/false).ok());  // evaluation leaves them alone
  EXPECT_NEAR((*p)->PersistentValue("bn.running_mean")[0], 0.25, 1e-6);
}

// A program of the same model at another shape (ProgramOptions::share_persistent_with) uses the
// first one's parameters, gradients and running statistics: creating it initialises nothing,
// and a step of either is a step of both. A model whose parameters differ is refused, naming
// the parameter.
TEST(TrainingProgramTest, AProgramAtAnotherShapeSharesTheParameters) {
  const auto model = [](int64_t batch, int64_t classes) {
    GraphBuilder b("bn");
    Value x = b.Input("x", {batch, 2, 1, 1});
    Value labels = b.Input("labels", {batch}, DType::kI64);
    Value h = b.BatchNorm2d(x, "bn", {.momentum = 0.1}).Flatten(1, "flat");
    b.Output(b.SoftmaxCrossEntropy(b.Linear(h, classes, "fc"), labels, "loss"));
    return *std::move(b).Build();
  };
  auto whole = TrainingProgram::Create(model(4, 2), {.seed = 1});
  ASSERT_TRUE(whole.ok()) << whole.status();
  const std::vector<float> initial = (*whole)->PersistentValue("fc.weight");
  auto half = TrainingProgram::Create(model(2, 2),
                                      {.seed = 2, .share_persistent_with = whole->get()});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ((*whole)->PersistentValue("fc.weight"), initial);  // seed 2 initialised nothing
  const auto& mine = (*half)->parameters();
  const auto& theirs = (*whole)->parameters();
  ASSERT_EQ(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    EXPECT_EQ(mine[i].name, theirs[i].name);
    EXPECT_EQ(mine[i].value.data(), theirs[i].value.data()) << mine[i].name;
    EXPECT_EQ(mine[i].grad.data(), theirs[i].grad.data()) << mine[i].name;
  }
  ASSERT_TRUE((*half)->SetInput("x", std::vector<float>{1, 7, 3, 7}).ok());
  ASSERT_TRUE((*half)->SetInput("labels", std::vector<int64_t>{0, 1}).ok());
  ASSERT_TRUE((*half)->RunStep().ok());
  // The half batch's statistics (channel means 2 and 7) reached the whole program's.
  const std::vector<float> mean = (*whole)->PersistentValue("bn.running_mean");
  ASSERT_EQ(mean.size(), 2u);
  EXPECT_NEAR(mean[0], 0.2, 1e-6);
  EXPECT_NEAR(mean[1], 0.7, 1e-6);
  float grad = 0;
  for (float g : theirs[2].grad) grad += std::abs(g);
  EXPECT_EQ(theirs[2].name, "fc.weight");
  EXPECT_GT(grad, 0.f);
  // A step of the whole program writes the same memory the half one reads.
  ASSERT_TRUE((*whole)->SetPersistentValue("fc.bias", std::vector<float>{3, -3}).ok());
  EXPECT_EQ((*half)->PersistentValue("fc.bias"), (std::vector<float>{3, -3}));
  auto other = TrainingProgram::Create(model(2, 3), {.share_persistent_with = whole->get()});
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(absl::StrContains(other.status().message(), "cannot share parameter 'fc.weight'"))
      << other.status();
}

TEST(TrainingProgramTest, DropoutMasksFollowTheStepCounterSoResumesRepeatThem) {
  const auto build = [] {
    GraphBuilder b("dropout");
    Value x = b.Input("x", {8, 16});
    Value labels = b.Input("labels", {8}, DType::kI64);
    Value h = b.Dropout(b.Linear(x, 16, "fc1").Relu("relu"), 0.5, "drop");
    b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 4, "fc2"), labels, "loss"));
    return *std::move(b).Build();
  };
  const Batch batch = [] {
    Batch b;
    for (int i = 0; i < 8 * 16; ++i) b.x.push_back(std::sin(0.37f * i));
    for (int i = 0; i < 8; ++i) b.labels.push_back(i % 4);
    return b;
  }();
  const auto step = [&](TrainingProgram& p) {
    EXPECT_TRUE(p.SetInput("x", batch.x).ok());
    EXPECT_TRUE(p.SetInput("labels", batch.labels).ok());
    EXPECT_TRUE(p.RunStep().ok());
    return p.Loss();
  };
  auto a = TrainingProgram::Create(build(), {.seed = 2});
  auto b = TrainingProgram::Create(build(), {.seed = 2});
  ASSERT_TRUE(a.ok() && b.ok());
  const float first = step(**a);
  (*a)->SetInput("x", batch.x).IgnoreError();  // an evaluation in between does not count
  (*a)->SetInput("labels", batch.labels).IgnoreError();
  ASSERT_TRUE((*a)->RunForward(false).ok());
  const float second = step(**a);
  EXPECT_NE(first, second);  // another mask (no update in between)
  (*b)->set_steps_run(1);
  EXPECT_EQ(step(**b), second);
}

TEST(TrainingProgramTest, IntegerConstantsCarryTheirValues) {
  // loss = cross-entropy of rows {2, 1} of a learned table, gathered by constant indices.
  graph::Graph g("gather_const");
  const auto table = *g.AddTensor({.name = "table", .shape = {3, 4},
                                   .role = graph::TensorRole::kParameter});
  const auto index = *g.AddTensor({.name = "rows", .shape = {2}, .dtype = DType::kI64,
                                   .role = graph::TensorRole::kConstant, .data = {2, 1}});
  const auto labels = *g.AddTensor({.name = "labels", .shape = {2}, .dtype = DType::kI64,
                                    .role = graph::TensorRole::kInput});
  const auto rows = *g.AddTensor({.name = "picked"});
  const auto loss = *g.AddTensor({.name = "loss"});
  ASSERT_TRUE(g.AddNode({.name = "gather", .kind = graph::OpKind::kGather,
                         .inputs = {table, index}, .outputs = {rows},
                         .attrs = graph::AxisAttrs{.axis = 0}}).ok());
  ASSERT_TRUE(g.AddNode({.name = "loss", .kind = graph::OpKind::kSoftmaxCrossEntropy,
                         .inputs = {rows, labels}, .outputs = {loss},
                         .attrs = graph::LossAttrs{}}).ok());
  g.AddOutput(loss);
  ASSERT_TRUE(graph::InferShapes(g).ok());
  auto p = TrainingProgram::Create(std::move(g), {.seed = 1});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE((*p)->SetInput("labels", std::vector<int64_t>{0, 3}).ok());
  ASSERT_TRUE((*p)->RunStep().ok());
  // Only rows 2 and 1 of the table get a gradient; row 0 none.
  const TrainingProgram::Parameter& t = (*p)->parameters()[0];
  for (int j = 0; j < 4; ++j) EXPECT_EQ(t.grad[j], 0.f) << j;
  float row1 = 0, row2 = 0;
  for (int j = 0; j < 4; ++j) row1 += std::abs(t.grad[4 + j]), row2 += std::abs(t.grad[8 + j]);
  EXPECT_GT(row1, 0.f);
  EXPECT_GT(row2, 0.f);
}

TEST(TrainingProgramTest, InputErrorsNameTheInput) {
  auto p = TrainingProgram::Create(Mlp(2), {});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status unknown = (*p)->SetInput("images", std::vector<float>(12));
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(unknown.message(), "'images'")) << unknown;
  EXPECT_TRUE(absl::StrContains(unknown.message(), "labels")) << unknown;
  absl::Status count = (*p)->SetInput("x", std::vector<float>(5));
  EXPECT_TRUE(absl::StrContains(count.message(), "12 values")) << count;
  absl::Status type = (*p)->SetInput("labels", std::vector<float>(2));
  EXPECT_TRUE(absl::StrContains(type.message(), "integers")) << type;
  ASSERT_TRUE((*p)->SetInput("x", std::vector<float>(12)).ok());
  absl::Status unset = (*p)->RunStep();
  EXPECT_EQ(unset.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(unset.message(), "'labels'")) << unset;
}

TEST(TrainingProgramTest, ALossThatIsNotAScalarIsRefused) {
  GraphBuilder b("no_loss");
  Value x = b.Input("x", {2, 3});
  b.Output(b.Linear(x, 4, "fc"));
  auto p = TrainingProgram::Create(*std::move(b).Build(), {});
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "loss")) << p.status();
}

// The nmt model (encoder bi-LSTM and LSTM, a decoder LSTM started from the encoder's final
// state, attention over the encoder, a classifier): every parameter's gradient, the encoder's
// included, against central differences, on left-padded sources as the corpus job feeds them.
TEST(TrainingProgramTest, NmtGradientsMatchCentralDifferences) {
  const graph::Graph g = *graph::zoo::BuildNmt({.batch = 2, .vocab = 12, .length = 5});
  auto p = TrainingProgram::Create(g, {.seed = 4});
  ASSERT_TRUE(p.ok()) << p.status();
  exec::Batch in;
  in.Ints("src_tokens") = {0, 5, 7, 9, 4, 6, 11, 8, 5, 10};
  in.Ints("tgt_tokens") = {1, 6, 8, 4, 0, 1, 9, 7, 5, 11};
  in.Ints("tgt_labels") = {6, 8, 4, 2, 0, 9, 7, 5, 11, 2};
  in.Ints("tgt_lengths") = {5, 5};
  ASSERT_TRUE(SetInputs(**p, in).ok());
  ASSERT_TRUE((*p)->RunStep().ok());
  int checked = 0;
  for (TrainingProgram::Parameter& param : (*p)->parameters()) {
    const std::vector<float> grad(param.grad.begin(), param.grad.end());
    // The largest gradients of each parameter (the embeddings' used rows among them).
    std::vector<size_t> order(grad.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const size_t n = std::min<size_t>(6, order.size());
    std::partial_sort(order.begin(), order.begin() + n, order.end(),
                      [&](size_t a, size_t b) { return std::abs(grad[a]) > std::abs(grad[b]); });
    for (size_t j = 0; j < n; ++j) {
      const size_t k = order[j];
      const float saved = param.value[k];
      const float eps = 1e-2f;
      double loss[2];
      for (int s = 0; s < 2; ++s) {
        param.value[k] = saved + (s == 0 ? -eps : eps);
        ASSERT_TRUE(SetInputs(**p, in).ok());
        ASSERT_TRUE((*p)->RunForward(true).ok());
        loss[s] = (*p)->Loss();
      }
      param.value[k] = saved;
      const double numeric = (loss[1] - loss[0]) / (2.0 * eps);
      EXPECT_NEAR(grad[k], numeric, 1e-3 + 3e-2 * std::abs(numeric))
          << param.name << "[" << k << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

}  // namespace
}  // namespace tessera::exec
