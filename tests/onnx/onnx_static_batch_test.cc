// Static exports (no dynamic axes, traced at batch 4) imported and planned at other batches:
// the committed files of tests/models/export_static_models.py.
#include <string>

#include "gtest/gtest.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/parameters.h"
#ifdef TESSERA_HAVE_PLAN_COMMANDS
#include "tessera/tools/plan_command.h"
#include "tessera/tools/plan_request.h"
#endif
#include "onnx_test_util.h"

namespace tessera::graph {
namespace {

using testing::Named;

const std::string kModels = std::string(TESSERA_SOURCE_DIR) + "/tests/models/";
constexpr int64_t kTraceBatch = 4;

absl::StatusOr<Graph> Import(const std::string& file, int64_t batch) {
  return ImportOnnxFile(kModels + file, {.batch = batch});
}

// Every tensor of `traced` that `rebatched` has under the same name has the same shape, except
// dimensions of k * 4 that became k * batch; and the node lists agree op for op.
void ExpectSameGraphAtBatch(const Graph& traced, const Graph& rebatched, int64_t batch) {
  ASSERT_EQ(traced.nodes().size(), rebatched.nodes().size());
  for (size_t i = 0; i < traced.nodes().size(); ++i) {
    EXPECT_EQ(traced.nodes()[i].name, rebatched.nodes()[i].name);
    EXPECT_EQ(traced.nodes()[i].kind, rebatched.nodes()[i].kind) << traced.nodes()[i].name;
  }
  int scaled = 0;
  for (const Tensor& t : traced.tensors()) {
    const Tensor& r = Named(rebatched, t.name);
    if (r.name == "<missing>") continue;  // a rewritten constant has a new name
    ASSERT_EQ(t.shape.size(), r.shape.size()) << t.name;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] == r.shape[d]) continue;
      EXPECT_EQ(r.shape[d] * kTraceBatch, t.shape[d] * batch)
          << t.name << " " << ShapeString(t.shape) << " -> " << ShapeString(r.shape);
      ++scaled;
    }
  }
  EXPECT_GT(scaled, 0);
  EXPECT_EQ(CountParameters(traced), CountParameters(rebatched));
}

TEST(OnnxStaticBatchTest, TheTracingBatchGivesTheFilesGraph) {
  for (const char* file : {"static_seq2seq_lstm.onnx", "static_transformer_encoder.onnx",
                           "static_ambiguous_expand.onnx"}) {
    auto file_batch = Import(file, 0);
    auto traced = Import(file, kTraceBatch);
    ASSERT_TRUE(file_batch.ok()) << file_batch.status();
    ASSERT_TRUE(traced.ok()) << traced.status();
    ASSERT_EQ(file_batch->tensors().size(), traced->tensors().size()) << file;
    for (const Tensor& t : file_batch->tensors()) {
      EXPECT_EQ(Named(*traced, t.name).shape, t.shape) << file << " " << t.name;
    }
    ASSERT_EQ(file_batch->nodes().size(), traced->nodes().size());
    for (size_t i = 0; i < traced->nodes().size(); ++i) {
      EXPECT_EQ(file_batch->nodes()[i].attrs, traced->nodes()[i].attrs) << file;
    }
  }
}

TEST(OnnxStaticBatchTest, Seq2SeqLstmZeroStatesFollowTheBatch) {
  auto traced = Import("static_seq2seq_lstm.onnx", kTraceBatch);
  auto g = Import("static_seq2seq_lstm.onnx", 64);
  ASSERT_TRUE(traced.ok()) << traced.status();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "src").shape, (Shape{64, 7}));
  EXPECT_EQ(Named(*g, "tgt").shape, (Shape{64, 5}));
  EXPECT_EQ(Named(*g, "log_probs").shape, (Shape{64, 5, 500}));
  // torch.zeros(2, B, 48), folded to [1, 4, 48] per layer and expanded: [1, 64, 48].
  EXPECT_EQ(Named(*g, "/encoder/Expand_output_0").shape, (Shape{1, 64, 48}));
  EXPECT_EQ(Named(*g, "/encoder/LSTM_1_output_0").shape, (Shape{7, 1, 64, 48}));
  EXPECT_EQ(Named(*g, "/decoder/LSTM_output_1").shape, (Shape{1, 64, 48}));
  ExpectSameGraphAtBatch(*traced, *g, 64);
}

TEST(OnnxStaticBatchTest, TransformerReshapesKeepTheBatchOutsideTheHeads) {
  auto traced = Import("static_transformer_encoder.onnx", kTraceBatch);
  auto g = Import("static_transformer_encoder.onnx", 64);
  ASSERT_TRUE(traced.ok()) << traced.status();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "x").shape, (Shape{64, 10, 32}));
  EXPECT_EQ(Named(*g, "y").shape, (Shape{64, 10, 32}));
  // Baked [10, 16, 8] = [T, B*heads, d/heads] with heads == 4 == the tracing batch.
  const std::string attn = "/encoder/layers.0/self_attn/";
  EXPECT_EQ(Named(*g, attn + "Reshape_output_0").shape, (Shape{10, 256, 8}));
  EXPECT_EQ(Named(*g, attn + "MatMul_1_output_0").shape, (Shape{256, 10, 10}));
  EXPECT_EQ(Named(*g, attn + "Reshape_3_output_0").shape, (Shape{640, 32}));  // [T*B, d]
  EXPECT_EQ(Named(*g, attn + "Reshape_4_output_0").shape, (Shape{10, 64, 32}));  // [T, B, d]
  ExpectSameGraphAtBatch(*traced, *g, 64);
}

TEST(OnnxStaticBatchTest, AmbiguousExpandIsAnErrorThatSaysWhatToDo) {
  ASSERT_TRUE(Import("static_ambiguous_expand.onnx", kTraceBatch).ok());
  auto g = Import("static_ambiguous_expand.onnx", 64);
  ASSERT_FALSE(g.ok());
  const std::string message(g.status().message());
  EXPECT_NE(message.find("static_ambiguous_expand.onnx"), std::string::npos) << message;
  EXPECT_NE(message.find("(Expand)"), std::string::npos) << message;
  EXPECT_NE(message.find("[4, 4, 8]"), std::string::npos) << message;
  EXPECT_NE(message.find("dynamic batch axis"), std::string::npos) << message;
  EXPECT_NE(message.find("traced at batch 4"), std::string::npos) << message;
}

#ifdef TESSERA_HAVE_PLAN_COMMANDS
absl::StatusOr<tools::PlannedModel> Plan(const std::string& file, int64_t batch,
                                         int64_t devices) {
  tools::PlanRequest r{.model = kModels + file, .cluster = "h100-dgx", .devices = devices,
                       .batch = batch};
  return tools::PlanRequestedModel(r, {});
}

TEST(OnnxStaticBatchTest, PlansAtBatch64AndOn1024Devices) {
  for (const char* file : {"static_seq2seq_lstm.onnx", "static_transformer_encoder.onnx"}) {
    auto small = Plan(file, 64, 8);
    ASSERT_TRUE(small.ok()) << file << ": " << small.status();
    EXPECT_EQ(small->graph.tensor(small->graph.outputs()[0]).shape[0], 64) << file;
    EXPECT_FALSE(small->plan.layers.empty()) << file;
    auto large = Plan(file, 4096, 1024);
    ASSERT_TRUE(large.ok()) << file << ": " << large.status();
    EXPECT_EQ(large->graph.tensor(large->graph.outputs()[0]).shape[0], 4096) << file;
    EXPECT_EQ(large->cluster.devices(), 1024) << file;
  }
}

TEST(OnnxStaticBatchTest, PlanCommandTakesTheBatchOfAStaticExport) {
  std::ostringstream out, err;
  const int code = tools::RunPlan({kModels + "static_transformer_encoder.onnx", "--batch", "64",
                                   "--devices", "8", "--cluster", "h100-dgx", "--format",
                                   "json"},
                                  out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_NE(out.str().find("\"batch\": 64"), std::string::npos) << out.str().substr(0, 400);
}
#endif

}  // namespace
}  // namespace tessera::graph
