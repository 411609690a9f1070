// Imports every model of tests/models/manifest.json (structure-only torch exports)
// and checks shapes, parameters, buffers, data inputs and forward FLOPs against the
// manifest's PyTorch-side numbers.
#include <chrono>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/parameters.h"
#if __has_include("tessera/costmodel/op_estimate.h")
#include "tessera/costmodel/op_estimate.h"
#define TESSERA_HAVE_COSTMODEL 1
#endif

namespace tessera::graph {
namespace {

const std::string kModels = std::string(TESSERA_SOURCE_DIR) + "/tests/models/";

const nlohmann::json& Manifest() {
  static const nlohmann::json* manifest = [] {
    std::ifstream in(kModels + "manifest.json");
    auto* m = new nlohmann::json(nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false));
    return m;
  }();
  return *manifest;
}

std::vector<std::string> ModelFiles() {
  std::vector<std::string> files;
  if (!Manifest().is_object()) return files;
  for (const auto& m : Manifest()["models"]) {
    if (m["file"] != "unsupported.onnx") files.push_back(m["file"]);
  }
  return files;
}

const nlohmann::json& Entry(const std::string& file) {
  for (const auto& m : Manifest()["models"]) {
    if (m["file"] == file) return m;
  }
  static const nlohmann::json empty;
  return empty;
}

// Import options at `batch`. The transformers' symbolic "seq" takes the length they
// were exported at (tests/models/README.md: "Exported at T=32", big_1000 at T=16).
OnnxImportOptions OptionsFor(const nlohmann::json& m, int64_t batch) {
  OnnxImportOptions options;
  options.batch = batch;
  const std::string file = m["file"];
  if (file.rfind("transformer_lm", 0) == 0) options.symbolic_dims["seq"] = 32;
  if (file == "big_1000.onnx") options.symbolic_dims["seq"] = 16;
  return options;
}

std::set<std::string> NamesWithRole(const Graph& g, TensorRole role) {
  std::set<std::string> names;
  for (TensorId t : g.TensorsWithRole(role)) names.insert(g.tensor(t).name);
  return names;
}

class OnnxModelTest : public ::testing::TestWithParam<std::string> {};

TEST(OnnxManifest, Exists) {
  ASSERT_TRUE(Manifest().is_object()) << "cannot read " << kModels << "manifest.json";
  EXPECT_GE(ModelFiles().size(), 15u);
}

TEST_P(OnnxModelTest, ImportsWithStaticShapesAndPyTorchParameters) {
  const nlohmann::json& m = Entry(GetParam());
  auto g = ImportOnnxFile(kModels + GetParam(), OptionsFor(m, m["batch"]));
  ASSERT_TRUE(g.ok()) << g.status();
  for (const Tensor& t : g->tensors()) {
    for (int64_t d : t.shape) EXPECT_GE(d, 0) << t.name;
  }
  // Every node's outputs agree with shape inference (the graph is complete).
  EXPECT_TRUE(g->Validate().ok());

  // Parameters: PyTorch's count, except where the exported graph itself holds a
  // different number of parameter elements (a folded tied weight is two inputs; Conv+BN
  // fusion): then the graph's own count, param_input_elements (tests/models/README.md).
  const int64_t params = m["params"];
  const int64_t graph_params = m["param_input_elements"];
  EXPECT_EQ(CountParameters(*g), params == graph_params ? params : graph_params);
  std::set<std::string> expected_params(m["param_names"].begin(), m["param_names"].end());
  EXPECT_EQ(NamesWithRole(*g, TensorRole::kParameter), expected_params);
  std::set<std::string> expected_data(m["data_inputs"].begin(), m["data_inputs"].end());
  EXPECT_EQ(NamesWithRole(*g, TensorRole::kInput), expected_data);
  for (const std::string& buffer : m["buffer_names"]) {
    auto id = g->FindTensor(buffer);
    ASSERT_TRUE(id.has_value()) << buffer;
    EXPECT_EQ(g->tensor(*id).role, TensorRole::kConstant) << buffer;
  }
  std::set<std::string> outputs;
  for (TensorId t : g->outputs()) outputs.insert(g->tensor(t).name);
  EXPECT_EQ(outputs, std::set<std::string>(m["outputs"].begin(), m["outputs"].end()));
}

#ifdef TESSERA_HAVE_COSTMODEL
TEST_P(OnnxModelTest, ForwardFlopsMatchTheHandCountAtBothBatches) {
  const nlohmann::json& m = Entry(GetParam());
  auto g = ImportOnnxFile(kModels + GetParam(), OptionsFor(m, m["batch"]));
  ASSERT_TRUE(g.ok()) << g.status();
  const double expected = m["forward_flops"];
  EXPECT_NEAR(costmodel::EstimateGraph(*g).flops_forward, expected, 0.02 * expected);
  for (const auto& [batch, flops] : m["forward_flops_batch"].items()) {
    auto gb = ImportOnnxFile(kModels + GetParam(), OptionsFor(m, std::stoll(batch)));
    ASSERT_TRUE(gb.ok()) << gb.status();
    const double want = flops;
    EXPECT_NEAR(costmodel::EstimateGraph(*gb).flops_forward, want, 0.02 * want)
        << "at batch " << batch;
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(Manifest, OnnxModelTest, ::testing::ValuesIn(ModelFiles()),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(OnnxModels, UnsupportedOpsAreListedInOneMessage) {
  auto g = ImportOnnxFile(kModels + "unsupported.onnx");
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_EQ(msg.find(kModels + "unsupported.onnx: "), 0u) << msg;
  for (const char* type : {"GridSample", "TopK", "Det", "NonZero"}) {
    EXPECT_NE(msg.find(std::string(type) + " (node \"/"), std::string::npos) << type << ": " << msg;
  }
  EXPECT_NE(msg.find("unsupported op types: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("supported ops are listed in docs/onnx-import.md"), std::string::npos);
  EXPECT_EQ(msg.find("Conv ("), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Gemm ("), std::string::npos) << msg;
}

// The 1,000-node model imports completely. Its speed (the issue asks for under 1 s)
// is measured by bench/inspect_bench.cc and bench/inspect_vs_onnx.sh, not asserted here.
TEST(OnnxModels, ThousandNodeModelImports) {
  const nlohmann::json& m = Entry("big_1000.onnx");
  ASSERT_GT(static_cast<int>(m["node_count"]), 1000);
  auto g = ImportOnnxFile(kModels + "big_1000.onnx", OptionsFor(m, 8));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_GT(g->num_nodes(), 0);
  EXPECT_TRUE(g->Validate().ok());
}

TEST(OnnxModels, ShapeSubgraphsAreFoldedAway) {
  const nlohmann::json& m = Entry("transformer_lm.onnx");
  auto g = ImportOnnxFile(kModels + "transformer_lm.onnx", OptionsFor(m, 3));
  ASSERT_TRUE(g.ok()) << g.status();
  for (const Node& n : g->nodes()) {
    EXPECT_NE(n.kind, OpKind::kConcat) << n.name;  // all Concats in this model build shapes
  }
  auto logits = g->FindTensor("logits");
  ASSERT_TRUE(logits.has_value());
  EXPECT_EQ(g->tensor(*logits).shape, (Shape{3, 32, 10000}));
  // The token table and the position table are embeddings.
  int embeddings = 0;
  for (const Node& n : g->nodes()) embeddings += n.kind == OpKind::kEmbedding;
  EXPECT_EQ(embeddings, 2);
}

TEST(OnnxModels, SeqFirstInputsGetTheirBatchOnAxisOne) {
  auto g = ImportOnnxFile(kModels + "seq2seq_lstm.onnx", {.batch = 5});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensor(*g->FindTensor("src")).shape, (Shape{16, 5}));
  EXPECT_EQ(g->tensor(*g->FindTensor("log_probs")).shape, (Shape{5, 12, 32000}));
  auto lstm = ImportOnnxFile(kModels + "lstm_states.onnx", {.batch = 3});
  ASSERT_TRUE(lstm.ok()) << lstm.status();
  EXPECT_EQ(lstm->tensor(*lstm->FindTensor("h0")).shape, (Shape{4, 3, 32}));
  EXPECT_EQ(lstm->tensor(*lstm->FindTensor("out")).shape, (Shape{10, 3, 64}));
}

TEST(OnnxModels, SymbolicSequenceWithoutAValueIsAnErrorNamingIt) {
  auto g = ImportOnnxFile(kModels + "transformer_lm.onnx", {.batch = 2});
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_NE(msg.find("'tokens'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'seq'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera::graph
