// Lifetime analysis on small hand-built graphs: every first/last step and size worked out by
// hand from the schedule rules in docs/lifetimes.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/costmodel/backward_reads.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/parameters.h"
#include "tessera/graph/shape_inference.h"
#include "tessera/memory/lifetime.h"

namespace tessera::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

graph::Graph Build(graph::GraphBuilder& b) {
  absl::StatusOr<graph::Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : graph::Graph();
}

// x[4,8] -> fc1 (Gemm 8->16) -> relu -> fc2 (Gemm 16->3) -> loss (SoftmaxCrossEntropy).
graph::Graph Mlp() {
  graph::GraphBuilder b("mlp");
  graph::Value x = b.Input("x", {4, 8});
  graph::Value labels = b.Input("labels", {4}, graph::DType::kI64);
  graph::Value h = b.Relu(b.Linear(x, 16, "fc1"), "relu");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 3, "fc2"), labels, "loss"));
  return Build(b);
}

TrainingLifetimes Analyze(const graph::Graph& g, LifetimeOptions o = {}) {
  absl::StatusOr<TrainingLifetimes> t = AnalyzeTrainingLifetimes(g, o);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : TrainingLifetimes();
}

struct Expected {
  std::string name;
  ValueKind kind;
  int64_t first, last, bytes;
  std::string shares_with;  // "" for none
};

void ExpectValues(const TrainingLifetimes& t, const std::vector<Expected>& expected) {
  for (const Expected& e : expected) {
    const int64_t i = FindValue(t, e.name);
    ASSERT_GE(i, 0) << "no value '" << e.name << "'";
    const Value& v = t.values[i];
    EXPECT_EQ(v.kind, e.kind) << e.name << " is " << ValueKindName(v.kind);
    EXPECT_EQ(v.first_step, e.first) << e.name;
    EXPECT_EQ(v.last_step, e.last) << e.name;
    EXPECT_EQ(v.bytes, e.bytes) << e.name;
    const std::string shares = v.shares_with < 0 ? "" : t.values[v.shares_with].name;
    EXPECT_EQ(shares, e.shares_with) << e.name;
  }
}

// Steps: 0 fc1, 1 relu, 2 fc2, 3 loss | 4 loss, 5 fc2, 6 relu, 7 fc1 (backward) |
// 8-11 updates of fc1.weight, fc1.bias, fc2.weight, fc2.bias.
TEST(LifetimeTest, MlpScheduleAndEveryValueByHand) {
  const graph::Graph g = Mlp();
  const TrainingLifetimes t = Analyze(g, {.optimizer_states_per_param = 2, .alignment = 1});
  std::vector<std::string> names;
  std::vector<Phase> phases;
  for (const Step& s : t.steps) {
    names.push_back(s.name);
    phases.push_back(s.phase);
  }
  EXPECT_THAT(names, ElementsAre("fc1", "relu", "fc2", "loss", "loss", "fc2", "relu", "fc1",
                                 "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"));
  EXPECT_EQ(phases[3], Phase::kForward);
  EXPECT_EQ(phases[4], Phase::kBackward);
  EXPECT_EQ(phases[7], Phase::kBackward);
  EXPECT_EQ(phases[8], Phase::kUpdate);
  EXPECT_EQ(t.steps[7].node, t.steps[0].node);
  EXPECT_EQ(t.steps[8].node, graph::kNoNode);

  using K = ValueKind;
  ExpectValues(t, {
      // fc1's backward (dW = x^T dY) reads x: x lives to step 7.
      {"x", K::kDataInput, 0, 7, 4 * 8 * 4, ""},
      // The loss reads the labels forward (3) and backward (4).
      {"labels", K::kDataInput, 0, 4, 4 * 8, ""},
      // Read by relu only; nobody's backward reads it (relu keeps its output).
      {"fc1", K::kActivation, 0, 1, 4 * 16 * 4, ""},
      // Kept by relu's backward (6) and fc2's (5, for dW); in place over fc1.
      {"relu", K::kActivation, 1, 6, 4 * 16 * 4, "fc1"},
      {"fc2", K::kActivation, 2, 3, 4 * 3 * 4, ""},
      // A graph output: lives to the end of forward.
      {"loss", K::kActivation, 3, 3, 4, ""},
      // Softmax probabilities the loss keeps for its backward.
      {"loss.probs", K::kSaved, 3, 4, 4 * 3 * 4, ""},
      {"grad(loss)", K::kActivationGradient, 4, 4, 4, ""},
      {"grad(fc2)", K::kActivationGradient, 4, 5, 4 * 3 * 4, ""},
      {"grad(relu)", K::kActivationGradient, 5, 6, 4 * 16 * 4, ""},
      // relu's backward writes dX over dY.
      {"grad(fc1)", K::kActivationGradient, 6, 7, 4 * 16 * 4, "grad(relu)"},
      {"fc1.weight", K::kParameter, 0, 11, 16 * 8 * 4, ""},
      {"grad(fc1.weight)", K::kParameterGradient, 0, 11, 16 * 8 * 4, ""},
      {"adam_m(fc2.bias)", K::kOptimizerState, 0, 11, 3 * 4, ""},
      {"adam_v(fc2.bias)", K::kOptimizerState, 0, 11, 3 * 4, ""},
  });
  // Data inputs need no gradient.
  EXPECT_EQ(FindValue(t, "grad(x)"), -1);
  EXPECT_EQ(FindValue(t, "grad(labels)"), -1);
  // 10 tensors, 1 saved, 4 activation gradients, 4 parameter gradients, 8 Adam states.
  EXPECT_EQ(t.values.size(), 10u + 1 + 4 + 4 + 8);
  EXPECT_EQ(t.persistent_bytes, (8 * 16 + 16 + 16 * 3 + 3) * 4 * (2 + 2));
  // Buffers: x 128, labels 32, fc1+relu 256, fc2 48, loss 4, probs 48, grad(loss) 4,
  // grad(fc2) 48, grad(relu)+grad(fc1) 256.
  EXPECT_EQ(t.transient_bytes_no_reuse, 128 + 32 + 256 + 48 + 4 + 48 + 4 + 48 + 256);
}

TEST(LifetimeTest, MlpBuffersAndPeak) {
  const graph::Graph g = Mlp();
  const TrainingLifetimes t = Analyze(g, {.alignment = 1});
  const std::vector<Buffer> buffers = TransientBuffers(t);
  ASSERT_TRUE(ValidateBuffers(buffers).ok());
  ASSERT_EQ(buffers.size(), 9u);
  const auto buffer_of = [&](const std::string& name) {
    for (const Buffer& b : buffers) {
      if (b.id == FindValue(t, name)) return b;
    }
    ADD_FAILURE() << "no buffer with the id of '" << name << "'";
    return Buffer{};
  };
  // The in-place pair is one buffer named after its root, live on the union.
  const Buffer h = buffer_of("fc1");
  EXPECT_EQ(h.start, 0);
  EXPECT_EQ(h.end, 7);
  EXPECT_EQ(h.size, 256);
  const Buffer dh = buffer_of("grad(relu)");
  EXPECT_EQ(dh.start, 5);
  EXPECT_EQ(dh.end, 8);
  EXPECT_EQ(buffer_of("x").end, 8);
  // Live per step: 3: x 128 + labels 32 + h 256 + fc2 48 + loss 4 + probs 48 = 516;
  // 5: x 128 + h 256 + grad(fc2) 48 + dh 256 = 688; 6: x + h + dh = 640.
  const PeakReport peak = LiveAtPeak(t);
  EXPECT_EQ(peak.step, 5);
  EXPECT_EQ(peak.live_bytes, 688);
  EXPECT_EQ(LiveBytesLowerBound(buffers), 688);
  EXPECT_THAT(peak.values, ElementsAre(FindValue(t, "relu"), FindValue(t, "grad(relu)"),
                                       FindValue(t, "x"), FindValue(t, "grad(fc2)")));
}

TEST(LifetimeTest, WithoutInPlaceNothingSharesAndThePeakGrows) {
  const graph::Graph g = Mlp();
  const TrainingLifetimes t = Analyze(g, {.in_place = false, .alignment = 1});
  for (const Value& v : t.values) EXPECT_EQ(v.shares_with, -1) << v.name;
  // Step 6: x 128 + relu 256 + grad(relu) 256 + grad(fc1) 256.
  const PeakReport peak = LiveAtPeak(t);
  EXPECT_EQ(peak.step, 6);
  EXPECT_EQ(peak.live_bytes, 896);
  EXPECT_EQ(TransientBuffers(t).size(), 11u);
  EXPECT_EQ(t.transient_bytes_no_reuse, 128 + 32 + 2 * 256 + 48 + 4 + 48 + 4 + 48 + 2 * 256);
}

TEST(LifetimeTest, AlignmentRoundsEveryBufferUp) {
  const graph::Graph g = Mlp();
  const TrainingLifetimes t = Analyze(g);  // alignment 256
  for (const Buffer& b : TransientBuffers(t)) {
    EXPECT_EQ(b.size, 256) << "buffer " << b.id;  // every value here is <= 256 bytes
    EXPECT_EQ(b.alignment, 256);
  }
  EXPECT_EQ(t.transient_bytes_no_reuse, 9 * 256);
}

TEST(LifetimeTest, PersistentBytesFollowTheOptimizer) {
  const graph::Graph g = Mlp();
  const int64_t params = graph::CountParameters(g);
  ASSERT_EQ(params, 8 * 16 + 16 + 16 * 3 + 3);
  for (int states : {0, 1, 2}) {
    const TrainingLifetimes t = Analyze(g, {.optimizer_states_per_param = states});
    EXPECT_EQ(t.persistent_bytes, params * 4 * (2 + states)) << states << " states";
    EXPECT_EQ(FindValue(t, "momentum(fc1.weight)") >= 0, states == 1);
    EXPECT_EQ(FindValue(t, "adam_v(fc1.weight)") >= 0, states == 2);
  }
}

TEST(LifetimeTest, ScaleByNodeScalesAndDropsOwnedValues) {
  const graph::Graph g = Mlp();
  const TrainingLifetimes t = Analyze(g, {.alignment = 1});
  // Nodes in build order: fc1 0, relu 1, fc2 2, loss 3.
  ASSERT_EQ(g.node(3).name, "loss");
  const std::vector<double> half = {0.5, 0.5, 0.5, 0.5};
  std::vector<Buffer> scaled = TransientBuffers(t, half);
  std::vector<Buffer> full = TransientBuffers(t);
  ASSERT_EQ(scaled.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(scaled[i].size, (full[i].size + 1) / 2) << "buffer " << full[i].id;
  }
  // The loss node owns the labels (its first reader), the loss, its probabilities and
  // grad(loss): scale 0 drops their buffers.
  const std::vector<double> no_loss = {1, 1, 1, 0};
  std::vector<int64_t> ids;
  for (const Buffer& b : TransientBuffers(t, no_loss)) ids.push_back(b.id);
  // Gradients are numbered in tensor order: grad(fc1) (sharing grad(relu)'s buffer),
  // grad(relu), grad(fc2).
  EXPECT_THAT(ids, ElementsAre(FindValue(t, "x"), FindValue(t, "fc1"), FindValue(t, "fc2"),
                               FindValue(t, "grad(relu)"), FindValue(t, "grad(fc2)")));
  const PeakReport peak = LiveAtPeak(t, no_loss);
  EXPECT_EQ(peak.step, 5);
  EXPECT_EQ(peak.live_bytes, 688);
}

// x -> conv -> bn -> relu -> flatten -> fc -> loss.
TEST(LifetimeTest, ReluInPlaceAfterBatchNormAndViewsShare) {
  graph::GraphBuilder b("cnn");
  graph::Value x = b.Input("x", {2, 3, 4, 4});
  graph::Value labels = b.Input("labels", {2}, graph::DType::kI64);
  graph::Value h = b.BatchNorm2d(b.Conv2d(x, 2, 3, "conv", {.padding = 1}), "bn");
  h = b.Flatten(b.Relu(h, "relu"), 1, "flat");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 5, "fc"), labels, "loss"));
  const graph::Graph g = Build(b);
  const TrainingLifetimes t = Analyze(g, {.alignment = 1});
  // Forward 0 conv, 1 bn, 2 relu, 3 flat, 4 fc, 5 loss; backward 6 loss, 7 fc, 8 flat,
  // 9 relu, 10 bn, 11 conv.
  ASSERT_EQ(t.steps.size(), 12u + 6);  // + conv.weight/bias, bn.weight/bias, fc.weight/bias
  const int64_t act = 2 * 2 * 4 * 4 * 4;
  using K = ValueKind;
  ExpectValues(t, {
      // bn's backward reads its input: the conv output cannot be overwritten.
      {"conv", K::kActivation, 0, 10, act, ""},
      // bn keeps its input, not its output: relu may write over it.
      {"bn", K::kActivation, 1, 2, act, ""},
      {"relu", K::kActivation, 2, 9, act, "bn"},
      // A view: the same memory as relu; fc's backward reads it for dW.
      {"flat", K::kActivation, 3, 7, act, "relu"},
      {"bn.stats", K::kSaved, 1, 10, 2 * 2 * 4, ""},
      {"grad(flat)", K::kActivationGradient, 7, 8, act, "grad(relu)"},
      {"grad(relu)", K::kActivationGradient, 8, 9, act, ""},
      {"grad(bn)", K::kActivationGradient, 9, 10, act, "grad(relu)"},
      {"grad(conv)", K::kActivationGradient, 10, 11, act, ""},
      {"bn.running_mean", K::kConstant, 0, 17, 2 * 4, ""},
  });
  // Constants count as persistent (no gradient, no state).
  EXPECT_EQ(t.persistent_bytes, graph::CountParameters(g) * 4 * 2 + 2 * 2 * 4);
  EXPECT_EQ(FindValue(t, "grad(bn.running_mean)"), -1);
  // One buffer for bn, relu and flat: [1, 10).
  bool found = false;
  for (const Buffer& buf : TransientBuffers(t)) {
    if (buf.id != FindValue(t, "bn")) continue;
    found = true;
    EXPECT_EQ(buf.start, 1);
    EXPECT_EQ(buf.end, 10);
    EXPECT_EQ(buf.size, act);
  }
  EXPECT_TRUE(found);
}

// a = fc1(x); r = gelu(a) keeps a; s = relu(r); y = s + r.
TEST(LifetimeTest, NoInPlaceOverInputsStillNeeded) {
  graph::GraphBuilder b("keep");
  graph::Value x = b.Input("x", {2, 8});
  graph::Value a = b.Linear(x, 8, "fc1");
  graph::Value r = b.Unary(graph::OpKind::kGelu, a, "gelu");
  graph::Value s = b.Relu(r, "relu");
  graph::Value y = b.Add(s, r, "add");
  graph::Value d = b.Relu(x, "relu_x");  // over a data input: never in place
  b.Output(b.ReduceSum(y + b.Linear(d, 8, "fc2"), {}, false, "sum"));
  const graph::Graph g = Build(b);
  const TrainingLifetimes t = Analyze(g);
  const auto shares = [&](const std::string& name) {
    const int64_t i = FindValue(t, name);
    EXPECT_GE(i, 0) << name;
    if (i < 0 || t.values[i].shares_with < 0) return std::string();
    return t.values[t.values[i].shares_with].name;
  };
  EXPECT_EQ(shares("gelu"), "");    // gelu's backward reads a
  EXPECT_EQ(shares("relu"), "");    // add still reads r
  // add: s is kept by relu's backward, r's last use is add itself: add writes over r.
  EXPECT_EQ(shares("add"), "gelu");
  EXPECT_EQ(shares("relu_x"), "");  // x is a data input
  // Backward of add: d(add) is handed over to grad(relu), its first and only contribution.
  // grad(gelu) also gets its first contribution from add's backward, but d(add) is taken by
  // then; relu's backward adds into grad(gelu) later, so it cannot take grad(relu) either.
  EXPECT_EQ(shares("grad(relu)"), "grad(add)");
  EXPECT_EQ(shares("grad(gelu)"), "");
}

TEST(LifetimeTest, ShapesNotInferredNameTheNode) {
  graph::Graph g("raw");
  const graph::TensorId x =
      *g.AddTensor({.name = "x", .shape = {4, 8}, .role = graph::TensorRole::kInput});
  const graph::TensorId w =
      *g.AddTensor({.name = "w", .shape = {8, 3}, .role = graph::TensorRole::kParameter});
  const graph::TensorId y = *g.AddTensor({.name = "y"});
  ASSERT_TRUE(g.AddNode({.name = "mm", .kind = graph::OpKind::kMatMul, .inputs = {x, w},
                         .outputs = {y}}).ok());
  g.AddOutput(y);
  absl::StatusOr<TrainingLifetimes> t = AnalyzeTrainingLifetimes(g);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("node 'mm'"));
  EXPECT_THAT(t.status().message(), HasSubstr("'y'"));
  EXPECT_THAT(t.status().message(), HasSubstr("InferShapes"));
  ASSERT_TRUE(graph::InferShapes(g).ok());
  EXPECT_TRUE(AnalyzeTrainingLifetimes(g).ok());
}

TEST(LifetimeTest, CycleAndBadOptionsAreInvalidArgument) {
  graph::Graph g("loop");
  const graph::TensorId a = *g.AddTensor({.name = "a", .shape = {2}});
  const graph::TensorId c = *g.AddTensor({.name = "c", .shape = {2}});
  ASSERT_TRUE(g.AddNode({.name = "first", .kind = graph::OpKind::kRelu, .inputs = {c},
                         .outputs = {a}}).ok());
  ASSERT_TRUE(g.AddNode({.name = "second", .kind = graph::OpKind::kRelu, .inputs = {a},
                         .outputs = {c}}).ok());
  absl::StatusOr<TrainingLifetimes> t = AnalyzeTrainingLifetimes(g);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("cycle"));
  EXPECT_THAT(t.status().message(), HasSubstr("node 'first'"));

  const graph::Graph mlp = Mlp();
  t = AnalyzeTrainingLifetimes(mlp, {.alignment = 3});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("alignment 3"));
  t = AnalyzeTrainingLifetimes(mlp, {.optimizer_states_per_param = -1});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("optimizer_states_per_param -1"));
  t = AnalyzeTrainingLifetimes(graph::Graph("empty"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("'empty' has no nodes"));
}

// The backward facts the analysis builds on (costmodel/backward_reads.h).
TEST(LifetimeTest, BackwardReadsOfTheMlpAndOfAWeightDerivation) {
  const graph::Graph g = Mlp();
  const costmodel::BackwardInfo b = costmodel::AnalyzeBackward(g);
  const auto id = [&](const char* name) { return *g.FindTensor(name); };
  ASSERT_EQ(b.nodes.size(), 4u);
  EXPECT_THAT(b.nodes[0].reads, ElementsAre(id("x")));  // fc1: dW = x^T dY
  EXPECT_THAT(b.nodes[1].reads, ElementsAre(id("relu")));  // relu: its output
  EXPECT_THAT(b.nodes[2].reads, ElementsAre(id("fc2.weight"), id("relu")));  // dX and dW
  EXPECT_THAT(b.nodes[3].reads, ElementsAre(id("labels")));
  EXPECT_EQ(b.nodes[3].private_bytes, 4 * 3 * 4);  // the probabilities
  for (const costmodel::NodeBackward& n : b.nodes) EXPECT_TRUE(n.has_backward);
  EXPECT_FALSE(b.needs_grad[id("x")]);
  EXPECT_FALSE(b.needs_grad[id("labels")]);
  EXPECT_TRUE(b.needs_grad[id("fc1")]);
  EXPECT_TRUE(b.needs_grad[id("fc1.weight")]);

  // y = x * Transpose(w): the transpose is a derivation with a backward that reads nothing;
  // relu(x) has no backward at all.
  graph::GraphBuilder d("derived");
  graph::Value x = d.Input("x", {2, 4});
  graph::Value w = d.Parameter("w", {3, 4});
  graph::Value r = d.Relu(x, "relu_x");
  graph::Value y = d.MatMul(r, d.Transpose(w, {1, 0}, "w_t"), "mm");
  d.Output(d.ReduceSum(y, {}, false, "sum"));
  const graph::Graph h = Build(d);
  const costmodel::BackwardInfo e = costmodel::AnalyzeBackward(h);
  ASSERT_EQ(e.nodes.size(), 4u);  // relu_x, w_t, mm, sum
  EXPECT_FALSE(e.nodes[0].has_backward);
  EXPECT_TRUE(e.derivation[1]);
  EXPECT_TRUE(e.nodes[1].has_backward);
  EXPECT_TRUE(e.nodes[1].reads.empty());
  EXPECT_THAT(e.nodes[2].reads, ElementsAre(*h.FindTensor("relu_x")));  // dB = A^T dY
  // Schedule: forward relu_x 0, w_t 1, mm 2, sum 3; backward sum 4, mm 5, w_t 6; update w 7.
  // The transposed weight is a transient activation read by mm's forward only (mm's backward
  // keeps A for dB); its gradient lives from mm's backward to w_t's.
  const TrainingLifetimes t = Analyze(h, {.alignment = 1});
  EXPECT_EQ(t.steps.size(), 4u + 3 + 1);
  using K = ValueKind;
  ExpectValues(t, {
      {"w_t", K::kActivation, 1, 2, 4 * 3 * 4, ""},
      {"grad(w_t)", K::kActivationGradient, 5, 6, 4 * 3 * 4, ""},
      {"relu_x", K::kActivation, 0, 5, 2 * 4 * 4, ""},
  });

  // A derivation's backward still reads what its op keeps: in the weight normalisation
  // u = v / sqrt(sum(v * v)) (gnmt's attention vector) Sqrt's backward reads its output and
  // Div's its divisor and output, so those live until the backward steps that read them.
  graph::GraphBuilder n("normalised");
  graph::Value xn = n.Input("x", {2, 4});
  graph::Value v = n.Parameter("v", {4});
  graph::Value norm = n.ReduceSum(n.Mul(v, v, "vv"), {}, true, "ss").Sqrt("norm");
  n.Output(n.ReduceSum(n.MatMul(xn, n.Div(v, norm, "u"), "xu"), {}, false, "sum"));
  const graph::Graph k = Build(n);
  const costmodel::BackwardInfo kb = costmodel::AnalyzeBackward(k);
  const auto kid = [&](const char* name) { return *k.FindTensor(name); };
  ASSERT_EQ(kb.nodes.size(), 6u);  // vv, ss, norm, u, xu, sum
  EXPECT_TRUE(kb.derivation[2]);
  EXPECT_THAT(kb.nodes[2].reads, ElementsAre(kid("norm")));
  EXPECT_THAT(kb.nodes[3].reads, ElementsAre(kid("norm"), kid("u")));
  // Forward vv 0 ... sum 5; backward sum 6, xu 7, u 8, norm 9, ss 10, vv 11.
  const TrainingLifetimes kt = Analyze(k, {.in_place = false, .alignment = 1});
  ExpectValues(kt, {{"norm", K::kActivation, 2, 9, 4, ""}, {"u", K::kActivation, 3, 8, 16, ""}});
}

TEST(LifetimeTest, HostileSizesAreInvalidArgumentNamingTheValue) {
  graph::GraphBuilder b("huge");
  graph::Value x = b.Input("x", {int64_t{1} << 26, int64_t{1} << 26});  // 2^54 bytes
  b.Output(b.Relu(x, "relu"));
  const graph::Graph g = Build(b);
  absl::StatusOr<TrainingLifetimes> t = AnalyzeTrainingLifetimes(g);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("value 'x'"));
  EXPECT_THAT(t.status().message(), HasSubstr("2^50"));
}

TEST(LifetimeTest, ValueKindNamesAndPersistence) {
  EXPECT_EQ(ValueKindName(ValueKind::kDataInput), "data_input");
  EXPECT_EQ(ValueKindName(ValueKind::kActivationGradient), "activation_gradient");
  EXPECT_EQ(ValueKindName(ValueKind::kOptimizerState), "optimizer_state");
  EXPECT_TRUE(IsPersistent(ValueKind::kParameter));
  EXPECT_TRUE(IsPersistent(ValueKind::kParameterGradient));
  EXPECT_TRUE(IsPersistent(ValueKind::kOptimizerState));
  EXPECT_TRUE(IsPersistent(ValueKind::kConstant));
  EXPECT_FALSE(IsPersistent(ValueKind::kActivation));
  EXPECT_FALSE(IsPersistent(ValueKind::kSaved));
  EXPECT_FALSE(IsPersistent(ValueKind::kDataInput));
}

}  // namespace
}  // namespace tessera::memory
