// Graph files: lossless round trips (every op, every attribute alternative,
// exact doubles, awkward names) and the documented layout.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "graph_test_util.h"
#include "sample_graphs.h"
#include "tessera/graph/batch.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/shape_inference.h"

#if __has_include("tessera/graph/zoo/zoo.h")
#include "tessera/graph/zoo/zoo.h"
#define TESSERA_HAVE_ZOO 1
#endif

namespace tessera::graph::testing {
namespace {

// Writes, reads back, and checks the copy equals the original and writes the same text.
void ExpectRoundTrip(const Graph& graph) {
  const std::string text = GraphToJson(graph);
  auto loaded = GraphFromJson(text, "roundtrip.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status() << "\n" << text;
  ExpectSameGraph(graph, *loaded);
  EXPECT_EQ(GraphToJson(*loaded), text);
}

TEST(GraphJsonRoundTripTest, EveryOpOfTheCatalogue) {
  for (OpKind kind : AllOpKinds()) {
    SCOPED_TRACE(OpName(kind));
    const Graph g = SampleGraph(kind);
    ASSERT_EQ(g.num_nodes(), 1);
    EXPECT_EQ(g.node(0).kind, kind);
    ExpectRoundTrip(g);
  }
}

TEST(GraphJsonRoundTripTest, SamplesCoverEveryAttributeAlternativeWithNonDefaults) {
  std::set<size_t> covered;
  for (OpKind kind : AllOpKinds()) {
    const Graph g = SampleGraph(kind);
    const OpAttrs& attrs = g.node(0).attrs;
    covered.insert(attrs.index());
    // A sample with attributes sets at least one of them, so a reader that
    // dropped the field would fail the round trip.
    if (!std::holds_alternative<std::monostate>(attrs)) {
      EXPECT_FALSE(attrs == DefaultAttrs(kind)) << OpName(kind) << " uses default attributes";
    }
  }
  EXPECT_EQ(covered.size(), std::variant_size_v<OpAttrs>);
}

TEST(GraphJsonRoundTripTest, SmallNet) { ExpectRoundTrip(SmallNet()); }

TEST(GraphJsonRoundTripTest, EmptyGraph) { ExpectRoundTrip(Graph("")); }

TEST(GraphJsonRoundTripTest, DocumentedLayout) {
  Graph g("mlp");
  TensorId x = *g.AddTensor({.name = "x", .shape = {32, 784}, .role = TensorRole::kInput});
  TensorId w = *g.AddTensor({.name = "w", .shape = {784, 10}, .role = TensorRole::kParameter});
  TensorId s = *g.AddTensor(
      {.name = "s", .shape = {2}, .role = TensorRole::kConstant, .data = {0.5, -1e300}});
  TensorId y = *g.AddTensor({.name = "y"});
  TensorId z = *g.AddTensor({.name = "z"});
  ASSERT_TRUE(
      g.AddNode({.name = "mm", .kind = OpKind::kMatMul, .inputs = {x, w}, .outputs = {y}}).ok());
  ASSERT_TRUE(g.AddNode({.name = "clip",
                         .kind = OpKind::kClip,
                         .inputs = {y},
                         .outputs = {z},
                         .attrs = ScalarAttrs{.alpha = -std::numeric_limits<double>::infinity(),
                                              .beta = 6}})
                  .ok());
  (void)s;
  g.AddOutput(z);
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(GraphToJson(g), R"({
  "format": "tessera-graph",
  "version": 1,
  "name": "mlp",
  "tensors": [
    {"name": "x", "shape": [32, 784], "dtype": "f32", "role": "input"},
    {"name": "w", "shape": [784, 10], "dtype": "f32", "role": "parameter"},
    {"name": "s", "shape": [2], "dtype": "f32", "role": "constant", "data": [0.5, -1e+300]},
    {"name": "y", "shape": [32, 10], "dtype": "f32", "role": "activation"},
    {"name": "z", "shape": [32, 10], "dtype": "f32", "role": "activation"}
  ],
  "nodes": [
    {"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {}},
    {"name": "clip", "op": "Clip", "inputs": ["y"], "outputs": ["z"], "attrs": {"alpha": "-inf", "beta": 6.0}}
  ],
  "outputs": ["z"]
}
)");
  ExpectRoundTrip(g);
}

TEST(GraphJsonRoundTripTest, OptionalInputsWriteNull) {
  const Graph g = SampleGraph(OpKind::kLstm);
  const std::string text = GraphToJson(g);
  EXPECT_NE(text.find(R"("inputs": ["x", "w", "r", "bias", null, "h0", null])"), std::string::npos)
      << text;
}

TEST(GraphJsonRoundTripTest, DoublesAreExact) {
  const double kInf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {0.1,
                                      1.0 / 3.0,
                                      -0.0,
                                      0.0,
                                      5e-324,
                                      2.2250738585072014e-308,
                                      1.7976931348623157e308,
                                      -1.7976931348623157e308,
                                      9007199254740993.0,
                                      123456789.123456789,
                                      kInf,
                                      -kInf,
                                      std::numeric_limits<double>::quiet_NaN(),
                                      1e23,
                                      4.35,
                                      -2.5e-7};
  Graph g("doubles");
  const TensorId c = *g.AddTensor({.name = "c",
                                   .shape = {static_cast<int64_t>(values.size())},
                                   .role = TensorRole::kConstant,
                                   .data = values});
  const TensorId y = *g.AddTensor({.name = "y"});
  ASSERT_TRUE(
      g.AddNode({.name = "id", .kind = OpKind::kIdentity, .inputs = {c}, .outputs = {y}}).ok());
  ASSERT_TRUE(InferShapes(g).ok());
  ExpectRoundTrip(g);
  // Attributes too: Gemm alpha/beta through another sample.
  Graph gemm = SampleGraph(OpKind::kGemm);
  std::get<GemmAttrs>(gemm.mutable_node(0).attrs).alpha = 5e-324;
  std::get<GemmAttrs>(gemm.mutable_node(0).attrs).beta = -0.0;
  auto loaded = GraphFromJson(GraphToJson(gemm), "gemm.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(SameDouble(std::get<GemmAttrs>(loaded->node(0).attrs).alpha, 5e-324));
  EXPECT_TRUE(std::signbit(std::get<GemmAttrs>(loaded->node(0).attrs).beta));
}

// Names with quotes, backslashes, control characters and non-ASCII text.
std::string AwkwardSuffix(std::mt19937_64& rng) {
  static const char* const kPieces[] = {"\"", "\\", "\n", "\t", "\x01", "\x7f", "é",      "𝄞",
                                        "中", "/",  " ",  "{",  "]",    "null", "\\u0000"};
  std::string s;
  const int n = static_cast<int>(rng() % 5);
  for (int i = 0; i < n; ++i) s += kPieces[rng() % std::size(kPieces)];
  return s;
}

double RandomDouble(std::mt19937_64& rng) {
  for (;;) {
    const double d = std::bit_cast<double>(static_cast<uint64_t>(rng()));
    if (std::isfinite(d)) return d;
  }
}

// Property: any op, awkward names, random finite doubles in data and attributes.
TEST(GraphJsonRoundTripTest, RandomizedGraphsRoundTrip) {
  std::mt19937_64 rng(20240601);
  const auto& kinds = AllOpKinds();
  for (int iteration = 0; iteration < 300; ++iteration) {
    const OpKind kind = kinds[rng() % kinds.size()];
    SCOPED_TRACE(absl::StrCat("iteration ", iteration, " op ", OpName(kind)));
    Graph g = SampleGraph(kind, AwkwardSuffix(rng));
    for (TensorId t = 0; t < g.num_tensors(); ++t) {
      for (double& v : g.mutable_tensor(t).data) v = RandomDouble(rng);
    }
    OpAttrs& attrs = g.mutable_node(0).attrs;
    if (auto* a = std::get_if<GemmAttrs>(&attrs))
      a->alpha = RandomDouble(rng), a->beta = RandomDouble(rng);
    if (auto* a = std::get_if<ScalarAttrs>(&attrs))
      a->alpha = RandomDouble(rng), a->beta = RandomDouble(rng);
    if (auto* a = std::get_if<BatchNormAttrs>(&attrs)) a->epsilon = RandomDouble(rng);
    if (auto* a = std::get_if<LayerNormAttrs>(&attrs)) a->epsilon = RandomDouble(rng);
    if (auto* a = std::get_if<PadAttrs>(&attrs)) a->value = RandomDouble(rng);
    if (auto* a = std::get_if<LossAttrs>(&attrs)) a->ignore_index = static_cast<int64_t>(rng());
    ExpectRoundTrip(g);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(GraphJsonRoundTripTest, ActivationsMayOmitShapeAndDtype) {
  const std::string text = R"({"format": "tessera-graph", "version": 1, "name": "g",
    "tensors": [{"name": "x", "shape": [2, 3], "dtype": "f16", "role": "input"},
                {"name": "y", "role": "activation"}],
    "nodes": [{"name": "t", "op": "Transpose", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  auto g = GraphFromJson(text, "g.json");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensor(1).shape, (Shape{3, 2}));
  EXPECT_EQ(g->tensor(1).dtype, DType::kF16);
  EXPECT_TRUE(g->node(0).attrs == OpAttrs(PermAttrs{}));
}

TEST(GraphJsonRoundTripTest, MissingAttributeMembersKeepDefaults) {
  const std::string text = R"({"format": "tessera-graph", "version": 1, "name": "g",
    "tensors": [{"name": "a", "shape": [4, 6], "dtype": "f32", "role": "input"},
                {"name": "b", "shape": [5, 6], "dtype": "f32", "role": "parameter"},
                {"name": "y", "shape": [4, 5], "dtype": "f32", "role": "activation"}],
    "nodes": [{"name": "fc", "op": "Gemm", "inputs": ["a", "b"], "outputs": ["y"],
               "attrs": {"trans_b": true, "alpha": 2}}],
    "outputs": []})";
  auto g = GraphFromJson(text, "g.json");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->node(0).attrs == OpAttrs(GemmAttrs{.trans_b = true, .alpha = 2.0}));
  EXPECT_TRUE(g->outputs().empty());
}

#ifdef TESSERA_HAVE_ZOO
template <class Entry>
std::string ZooName(const Entry& entry) {
  if constexpr (requires { entry.name; }) {
    return std::string(entry.name);
  } else {
    return std::string(entry);
  }
}

TEST(GraphJsonRoundTripTest, EveryZooModel) {
  int count = 0;
  for (const auto& entry : zoo::ZooModels()) {
    const std::string name = ZooName(entry);
    SCOPED_TRACE(name);
    auto g = zoo::BuildZooModel(name, 2);
    ASSERT_TRUE(g.ok()) << g.status();
    ExpectRoundTrip(*g);
    ++count;
  }
  EXPECT_GT(count, 0);
}
#endif

}  // namespace
}  // namespace tessera::graph::testing

namespace tessera::graph {
namespace {

TEST(GraphJsonBatchAxisTest, SequenceFirstInputKeepsItsBatchAxis) {
  Graph g("seq_first");
  Tensor tokens{.name = "tokens", .shape = {12, 4}, .dtype = DType::kI64,
                .role = TensorRole::kInput};
  tokens.batch_axis = 1;
  ASSERT_TRUE(g.AddTensor(tokens).ok());
  TensorId table =
      *g.AddTensor({.name = "emb", .shape = {100, 8}, .role = TensorRole::kParameter});
  TensorId out = *g.AddTensor({.name = "out"});
  ASSERT_TRUE(g.AddNode({.name = "embed", .kind = OpKind::kEmbedding,
                         .inputs = {0, table}, .outputs = {out}})
                  .ok());
  g.AddOutput(out);
  ASSERT_TRUE(InferShapes(g).ok());
  const std::string text = GraphToJson(g);
  EXPECT_NE(text.find("\"batch_axis\": 1"), std::string::npos) << text;
  auto back = GraphFromJson(text, "seq_first.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->tensor(0).batch_axis, 1);
  EXPECT_EQ(GraphBatch(*back), 4);
  ASSERT_TRUE(SetBatch(*back, 6).ok());
  EXPECT_EQ(back->tensor(0).shape, (Shape{12, 6}));
  EXPECT_EQ(back->tensor(out).shape, (Shape{12, 6, 8}));
}

TEST(GraphJsonBatchAxisTest, BadBatchAxisIsRejectedWithItsPath) {
  const std::string base =
      R"({"format": "tessera-graph", "version": 1, "name": "g", "tensors": [
          {"name": "x", "shape": [2, 3], "dtype": "f32", "role": "ROLE", "batch_axis": AXIS}],
          "nodes": [], "outputs": []})";
  auto with = [&](const std::string& role, const std::string& axis) {
    std::string t = base;
    t.replace(t.find("ROLE"), 4, role);
    t.replace(t.find("AXIS"), 4, axis);
    return GraphFromJson(t, "bad.json");
  };
  EXPECT_TRUE(with("input", "1").ok());
  auto out_of_range = with("input", "2");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("batch_axis"), std::string::npos)
      << out_of_range.status();
  EXPECT_NE(out_of_range.status().message().find("[2,3]"), std::string::npos);
  auto on_parameter = with("parameter", "0");
  ASSERT_FALSE(on_parameter.ok());
  EXPECT_NE(on_parameter.status().message().find("only data inputs"), std::string::npos);
}

}  // namespace
}  // namespace tessera::graph
