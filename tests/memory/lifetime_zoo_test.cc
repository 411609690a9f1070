// Lifetime analysis on every zoo model and on the ONNX test models: the analysis succeeds, its
// buffers plan and check, and walking the schedule finds every value live where it is used and
// no memory overwritten while its content is still needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/costmodel/backward_reads.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/memory/lifetime.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::memory {
namespace {

using graph::NodeId;
using graph::OpKind;
using graph::TensorId;

bool IsGradient(ValueKind k) {
  return k == ValueKind::kActivationGradient || k == ValueKind::kParameterGradient;
}

bool IsViewOp(OpKind k) {
  return k == OpKind::kIdentity || k == OpKind::kReshape || k == OpKind::kFlatten ||
         k == OpKind::kSqueeze || k == OpKind::kUnsqueeze;
}

bool Live(const Value& v, int64_t s) { return v.first_step <= s && s <= v.last_step; }

// Which value holds each tensor and each tensor's gradient, read back from the values.
struct TensorValues {
  std::vector<int64_t> of, grad;
};

TensorValues MapTensors(const graph::Graph& g, const TrainingLifetimes& t) {
  TensorValues m{std::vector<int64_t>(g.num_tensors(), -1),
                 std::vector<int64_t>(g.num_tensors(), -1)};
  for (size_t i = 0; i < t.values.size(); ++i) {
    const Value& v = t.values[i];
    if (v.tensor < 0 || v.kind == ValueKind::kOptimizerState) continue;
    (IsGradient(v.kind) ? m.grad : m.of)[v.tensor] = static_cast<int64_t>(i);
  }
  return m;
}

// Every step finds the values it reads and writes live.
void CheckUsesAreLive(const graph::Graph& g, const TrainingLifetimes& t) {
  const TensorValues m = MapTensors(g, t);
  const costmodel::BackwardInfo b = costmodel::AnalyzeBackward(g);
  const auto expect_live = [&](int64_t v, int64_t s, const char* what) {
    if (v < 0) return;
    const Value& value = t.values[v];
    EXPECT_TRUE(Live(value, s)) << what << " '" << value.name << "' [" << value.first_step << ", "
                                << value.last_step << "] is used at step " << s << " ("
                                << t.steps[s].name << ")";
  };
  for (int64_t s = 0; s < static_cast<int64_t>(t.steps.size()); ++s) {
    const Step& step = t.steps[s];
    if (step.phase == Phase::kUpdate) continue;
    const graph::Node& node = g.node(step.node);
    if (step.phase == Phase::kForward) {
      for (TensorId in : node.inputs) {
        if (in != graph::kNoTensor) expect_live(m.of[in], s, "input");
      }
      for (TensorId out : node.outputs) {
        ASSERT_GE(m.of[out], 0);
        EXPECT_EQ(t.values[m.of[out]].first_step, s) << t.values[m.of[out]].name;
      }
      continue;
    }
    for (TensorId r : b.nodes[step.node].reads) expect_live(m.of[r], s, "backward read");
    for (TensorId out : node.outputs) expect_live(m.grad[out], s, "output gradient");
    for (TensorId in : node.inputs) {
      if (in != graph::kNoTensor) expect_live(m.grad[in], s, "input gradient");
    }
  }
}

// The contents of the memory groups: values joined by view edges hold one content; an
// in-place edge starts a new content in the same memory.
struct Contents {
  std::vector<std::vector<int64_t>> members;   // by content (a representative value)
  std::vector<std::vector<int64_t>> of_group;  // by group root: its contents
};

Contents SplitIntoContents(const graph::Graph& g, const TrainingLifetimes& t) {
  const int64_t n = static_cast<int64_t>(t.values.size());
  std::vector<int64_t> root(n), content(n);
  std::iota(content.begin(), content.end(), 0);
  const auto find = [&content](int64_t v) {
    while (content[v] != v) v = content[v];
    return v;
  };
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = i;
    for (int64_t hops = 0; t.values[r].shares_with >= 0 && hops <= n; ++hops) {
      r = t.values[r].shares_with;
    }
    EXPECT_LT(t.values[r].shares_with, 0) << "shares_with cycle at " << t.values[i].name;
    root[i] = r;
    const Value& v = t.values[i];
    if (v.shares_with < 0) continue;
    const Value& u = t.values[v.shares_with];
    EXPECT_EQ(v.bytes, u.bytes) << v.name << " shares " << u.name;
    const NodeId p = v.tensor >= 0 ? g.tensor(v.tensor).producer : graph::kNoNode;
    const bool view = p != graph::kNoNode && IsViewOp(g.node(p).kind) && u.tensor >= 0 &&
                      g.node(p).inputs[0] == u.tensor && IsGradient(v.kind) == IsGradient(u.kind);
    if (view) content[find(i)] = find(v.shares_with);
  }
  Contents c{std::vector<std::vector<int64_t>>(n), std::vector<std::vector<int64_t>>(n)};
  for (int64_t i = 0; i < n; ++i) c.members[find(i)].push_back(i);
  for (int64_t v = 0; v < n; ++v) {
    if (!c.members[v].empty()) c.of_group[root[v]].push_back(v);
  }
  return c;
}

// Within a memory group, two different contents may be live together only at the one step
// where the node that reads the old content last writes the new one.
void CheckNoLiveContentOverwritten(const graph::Graph& g, const TrainingLifetimes& t) {
  const Contents contents = SplitIntoContents(g, t);
  const auto& members = contents.members;
  const auto span = [&](int64_t ver) {
    int64_t first = INT64_MAX, last = -1;
    for (int64_t i : members[ver]) {
      first = std::min(first, t.values[i].first_step);
      last = std::max(last, t.values[i].last_step);
    }
    return std::pair<int64_t, int64_t>(first, last);
  };
  const auto touches = [&](int64_t ver, int64_t s, bool as_input) {
    const graph::Node& node = g.node(t.steps[s].node);
    const auto& list = as_input ? node.inputs : node.outputs;
    for (int64_t i : members[ver]) {
      if (std::find(list.begin(), list.end(), t.values[i].tensor) != list.end()) return true;
    }
    return false;
  };
  // The old content is last used at the step that writes the new one: forward, that node
  // reads the old and writes the new; backward, it reads the gradient of its output (old)
  // and writes the gradient of an input (new).
  const auto handover = [&](int64_t old_v, int64_t new_v) {
    const int64_t s = span(new_v).first;
    if (span(old_v).second != s || span(old_v).first > s) return false;
    if (t.steps[s].phase == Phase::kUpdate) return false;
    const bool forward = t.steps[s].phase == Phase::kForward;
    return touches(old_v, s, forward) && touches(new_v, s, !forward);
  };
  for (const auto& versions : contents.of_group) {
    for (size_t a = 0; a < versions.size(); ++a) {
      for (size_t c = a + 1; c < versions.size(); ++c) {
        const int64_t u = versions[a], w = versions[c];
        const auto [uf, ul] = span(u);
        const auto [wf, wl] = span(w);
        if (ul < wf || wl < uf) continue;  // one after the other
        EXPECT_TRUE(handover(u, w) || handover(w, u))
            << "different contents live together in one memory: " << t.values[u].name << " ["
            << uf << ", " << ul << "] and " << t.values[w].name << " [" << wf << ", " << wl << "]";
      }
    }
  }
}

// Every transient value lies inside the buffer named after its group root.
void CheckBuffersCoverValues(const TrainingLifetimes& t, const std::vector<Buffer>& buffers) {
  std::vector<const Buffer*> by_id(t.values.size(), nullptr);
  for (const Buffer& b : buffers) by_id[b.id] = &b;
  for (size_t i = 0; i < t.values.size(); ++i) {
    int64_t r = static_cast<int64_t>(i);
    while (t.values[r].shares_with >= 0) r = t.values[r].shares_with;
    const Value& v = t.values[i];
    const Buffer* b = by_id[r];
    if (IsPersistent(v.kind)) {
      EXPECT_EQ(b, nullptr) << v.name << " is persistent";
      continue;
    }
    if (b == nullptr) continue;  // a view of a persistent value, or 0 bytes
    EXPECT_LE(b->start, v.first_step) << v.name;
    EXPECT_GE(b->end, v.last_step + 1) << v.name;
    EXPECT_GE(b->size, v.bytes) << v.name;
    EXPECT_EQ(b->size % t.alignment, 0) << v.name;
  }
}

int64_t PersistentBytesByHand(const graph::Graph& g, int states) {
  int64_t bytes = 0;
  for (const graph::Tensor& tensor : g.tensors()) {
    const int64_t size = graph::NumElements(tensor.shape) * graph::DTypeSize(tensor.dtype);
    if (tensor.role == graph::TensorRole::kConstant) bytes += size;
    if (tensor.role != graph::TensorRole::kParameter) continue;
    bytes += graph::IsFloating(tensor.dtype) ? size * (2 + states) : size;
  }
  return bytes;
}

// Analysis, buffers, plan and checker, and the schedule walk on one graph.
void CheckModel(const graph::Graph& g) {
  absl::StatusOr<TrainingLifetimes> t =
      AnalyzeTrainingLifetimes(g, {.optimizer_states_per_param = 2});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->persistent_bytes, PersistentBytesByHand(g, 2));

  const std::vector<Buffer> buffers = TransientBuffers(*t);
  ASSERT_TRUE(ValidateBuffers(buffers).ok()) << ValidateBuffers(buffers);
  int64_t total = 0;
  for (const Buffer& b : buffers) total += b.size;
  EXPECT_EQ(total, t->transient_bytes_no_reuse);
  absl::StatusOr<OffsetPlan> plan = PlanOffsets(buffers, {.time_limit_s = 0.1});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckOffsets(buffers, *plan).ok()) << CheckOffsets(buffers, *plan);
  EXPECT_GE(plan->arena_bytes, plan->lower_bound);
  EXPECT_LE(plan->arena_bytes, t->transient_bytes_no_reuse);
  const PeakReport peak = LiveAtPeak(*t);
  EXPECT_EQ(peak.live_bytes, plan->lower_bound);
  ASSERT_FALSE(peak.values.empty());

  CheckUsesAreLive(g, *t);
  CheckNoLiveContentOverwritten(g, *t);
  CheckBuffersCoverValues(*t, buffers);

  // Without sharing, more memory and still consistent.
  absl::StatusOr<TrainingLifetimes> plain = AnalyzeTrainingLifetimes(g, {.in_place = false});
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (const Value& v : plain->values) EXPECT_EQ(v.shares_with, -1) << v.name;
  EXPECT_GE(plain->transient_bytes_no_reuse, t->transient_bytes_no_reuse);
  EXPECT_GE(LiveAtPeak(*plain).live_bytes, peak.live_bytes);
  CheckUsesAreLive(g, *plain);
}

class LifetimeZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LifetimeZooTest, AnalysisPlansChecksAndWalksClean) {
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel(GetParam(), 2);
  ASSERT_TRUE(g.ok()) << g.status();
  CheckModel(*g);
}

// Acceptance: at batch 32 the planned arena is within 1.01x of the lower bound.
TEST_P(LifetimeZooTest, ArenaAtBatch32WithinOnePercentOfLowerBound) {
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel(GetParam(), 32);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<TrainingLifetimes> t =
      AnalyzeTrainingLifetimes(*g, {.optimizer_states_per_param = 2});
  ASSERT_TRUE(t.ok()) << t.status();
  const std::vector<Buffer> buffers = TransientBuffers(*t);
  absl::StatusOr<OffsetPlan> plan = PlanOffsets(buffers, {.time_limit_s = 1.0});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckOffsets(buffers, *plan).ok());
  EXPECT_LE(static_cast<double>(plan->arena_bytes), 1.01 * static_cast<double>(plan->lower_bound))
      << buffers.size() << " buffers";
}

std::vector<std::string> ZooNames() {
  std::vector<std::string> names;
  for (const graph::zoo::ZooModelInfo& m : graph::zoo::ZooModels()) names.push_back(m.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Zoo, LifetimeZooTest, ::testing::ValuesIn(ZooNames()),
                         [](const auto& info) { return info.param; });

// In the CNNs a ReLU's input is only read by the ReLU (convolutions, batch norm and the
// residual Add keep their inputs, not their outputs): every ReLU runs in place, forward and
// backward.
class LifetimeCnnTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LifetimeCnnTest, EveryReluRunsInPlace) {
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel(GetParam(), 2);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<TrainingLifetimes> t = AnalyzeTrainingLifetimes(*g);
  ASSERT_TRUE(t.ok()) << t.status();
  const TensorValues m = MapTensors(*g, *t);
  int relus = 0;
  for (const graph::Node& node : g->nodes()) {
    if (node.kind != OpKind::kRelu) continue;
    ++relus;
    const Value& out = t->values[m.of[node.outputs[0]]];
    EXPECT_EQ(out.shares_with, m.of[node.inputs[0]]) << node.name;
    const Value& dx = t->values[m.grad[node.inputs[0]]];
    EXPECT_EQ(dx.shares_with, m.grad[node.outputs[0]]) << "grad of " << node.name;
  }
  EXPECT_GT(relus, 0);
}

INSTANTIATE_TEST_SUITE_P(Zoo, LifetimeCnnTest,
                         ::testing::Values("alexnet", "vgg16", "resnet50"),
                         [](const auto& info) { return info.param; });

// Imported ONNX models: more views (Reshape, Unsqueeze, Identity aliases of tied weights)
// and weight derivations (LSTM weight slices).
class LifetimeOnnxTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LifetimeOnnxTest, AnalysisPlansChecksAndWalksClean) {
  graph::OnnxImportOptions options;
  options.batch = 2;
  options.symbolic_dims = {{"seq", 8}};
  absl::StatusOr<graph::Graph> g = graph::ImportOnnxFile(
      absl::StrCat(TESSERA_SOURCE_DIR, "/tests/models/", GetParam(), ".onnx"), options);
  ASSERT_TRUE(g.ok()) << g.status();
  CheckModel(*g);
}

INSTANTIATE_TEST_SUITE_P(
    Models, LifetimeOnnxTest,
    ::testing::Values("alexnet", "conv_variants", "crnn", "default_quirks", "gemm_trans",
                      "lstm_states", "lstm_states_nofold", "mobilenet_v2", "resnet50",
                      "seq2seq_lstm", "shared_linear", "tied_embedding", "tied_embedding_nofold",
                      "transformer_lm", "vgg16"),
    [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera::memory
