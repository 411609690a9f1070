// The CPU-sized zoo models "nmt" and "ocr" (graph/zoo/nmt_small.cc, ocr_small.cc): the exact
// layers bench/torch_step_time.py builds in PyTorch, and batch-free graphs the hybrid runtime can
// re-batch to its local batch with graph::SetBatch.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera/graph/batch.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/parameters.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::graph::zoo {
namespace {

using ::testing::HasSubstr;

Graph Build(absl::string_view name, int64_t batch = 0) {
  absl::StatusOr<Graph> g = BuildZooModel(name, batch);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

Shape ShapeOf(const Graph& g, absl::string_view name) {
  auto id = g.FindTensor(name);
  return id ? g.tensor(*id).shape : Shape{-1};
}

// nn.LSTM's parameter count for one direction: 4 gates of input and recurrent weights, two biases.
int64_t LstmParams(int64_t in, int64_t hidden) { return 4 * hidden * (in + hidden) + 8 * hidden; }
int64_t LinearParams(int64_t in, int64_t out) { return in * out + out; }
int64_t ConvParams(int64_t in, int64_t out, int64_t kh, int64_t kw) {
  return in * out * kh * kw + out;
}

// Every parameter's name and shape: the names the PyTorch side and the tools rely on.
std::vector<std::pair<std::string, Shape>> Parameters(const Graph& g) {
  std::vector<std::pair<std::string, Shape>> params;
  for (TensorId t : g.TensorsWithRole(TensorRole::kParameter))
    params.emplace_back(g.tensor(t).name, g.tensor(t).shape);
  return params;
}

const ZooModelInfo* Info(absl::string_view name) {
  for (const ZooModelInfo& m : ZooModels())
    if (m.name == name) return &m;
  return nullptr;
}

TEST(ZooSmallModelsTest, RegisteredWithBatch32AndTheFullSizeModelTheyStandFor) {
  const ZooModelInfo* nmt = Info("nmt");
  const ZooModelInfo* ocr = Info("ocr");
  ASSERT_NE(nmt, nullptr);
  ASSERT_NE(ocr, nullptr);
  EXPECT_EQ(nmt->default_batch, 32);
  EXPECT_EQ(ocr->default_batch, 32);
  EXPECT_THAT(nmt->description, HasSubstr("gnmt"));
  EXPECT_THAT(ocr->description, HasSubstr("crnn"));
  EXPECT_THAT(nmt->description, HasSubstr("trains on this machine"));
  EXPECT_THAT(ocr->description, HasSubstr("trains on this machine"));
  EXPECT_EQ(Build("NMT").name(), "nmt");  // names are case-insensitive, as for every zoo model
}

TEST(ZooSmallModelsTest, OcrParameterCountIsTheSumOfItsLayers) {
  const int64_t expected = ConvParams(1, 32, 3, 3) + ConvParams(32, 64, 3, 3) +
                           ConvParams(64, 128, 3, 3) + 2 * 128 + ConvParams(128, 128, 3, 3) +
                           2 * 128 + ConvParams(128, 128, 2, 1) + 2 * LstmParams(128, 128) +
                           LinearParams(256, 128) + 2 * LstmParams(128, 128) +
                           LinearParams(256, 37);
  EXPECT_EQ(expected, 844'453);
  const Graph g = Build("ocr");
  EXPECT_EQ(CountParameters(g), 844'453);
  EXPECT_EQ(Info("ocr")->published_params, 844'453);
}

TEST(ZooSmallModelsTest, NmtParameterCountIsTheSumOfItsLayers) {
  const int64_t expected = 2 * 2000 * 128 + 2 * LstmParams(128, 256) + LstmParams(512, 256) +
                           LstmParams(128, 256) + LinearParams(512, 256) +
                           LinearParams(256, 2000);
  EXPECT_EQ(expected, 3'131'600);
  const Graph g = Build("nmt");
  EXPECT_EQ(CountParameters(g), 3'131'600);
  EXPECT_EQ(Info("nmt")->published_params, 3'131'600);
}

// The parameters bench/torch_step_time.py's Seq2SeqSmall holds, under Tessera's names.
TEST(ZooSmallModelsTest, NmtLayersAndNames) {
  const Graph g = Build("nmt");
  const std::vector<std::pair<std::string, Shape>> expected = {
      {"encoder.embedding.weight", {2000, 128}},
      {"encoder.rnn.0.weight_ih", {2, 1024, 128}},
      {"encoder.rnn.0.weight_hh", {2, 1024, 256}},
      {"encoder.rnn.0.bias", {2, 2048}},
      {"encoder.rnn.1.weight_ih", {1, 1024, 512}},
      {"encoder.rnn.1.weight_hh", {1, 1024, 256}},
      {"encoder.rnn.1.bias", {1, 2048}},
      {"decoder.embedding.weight", {2000, 128}},
      {"decoder.rnn.weight_ih", {1, 1024, 128}},
      {"decoder.rnn.weight_hh", {1, 1024, 256}},
      {"decoder.rnn.bias", {1, 2048}},
      {"attention.combine.weight", {256, 512}},
      {"attention.combine.bias", {256}},
      {"classifier.weight", {2000, 256}},
      {"classifier.bias", {2000}}};
  EXPECT_EQ(Parameters(g), expected);
  std::map<std::string, OpKind> kinds;
  std::map<std::string, const Node*> by_name;
  for (const Node& n : g.nodes()) {
    kinds[n.name] = n.kind;
    by_name[n.name] = &n;
  }
  EXPECT_EQ(kinds["encoder.rnn.0"], OpKind::kLstm);
  EXPECT_EQ(kinds["attention.scores"], OpKind::kMatMul);
  EXPECT_EQ(kinds["attention.weights"], OpKind::kSoftmax);
  EXPECT_EQ(kinds["attention.context"], OpKind::kMatMul);
  EXPECT_EQ(kinds["classifier"], OpKind::kGemm);
  ASSERT_TRUE(by_name.count("loss") && by_name.count("decoder.rnn"));
  const Node& loss = *by_name["loss"];
  EXPECT_EQ(std::get<LossAttrs>(loss.attrs).ignore_index, 0);  // <pad> does not count
  // The decoder starts from the encoder's last layer's final state.
  const Node& decoder = *by_name["decoder.rnn"];
  ASSERT_EQ(decoder.inputs.size(), 7u);
  EXPECT_EQ(g.tensor(decoder.inputs[4]).name, "tgt_lengths");
  EXPECT_EQ(g.tensor(decoder.inputs[5]).name, "encoder.rnn.1.h_n");
  EXPECT_EQ(g.tensor(decoder.inputs[6]).name, "encoder.rnn.1.c_n");
  EXPECT_EQ(ShapeOf(g, "attention.weights"), (Shape{32, 20, 20}));  // [B, T, S]
  EXPECT_EQ(ShapeOf(g, "classifier"), (Shape{20 * 32, 2000}));
}

// NmtSize::dropout puts Dropout(p) after both embeddings, between the encoder's layers and on
// the attention's output, feeding what those outputs fed; the parameters stay the zoo model's;
// a dropout outside [0, 1) is refused.
TEST(ZooSmallModelsTest, NmtDropoutSitsWhereItRegularises) {
  absl::StatusOr<Graph> g = BuildNmt({.batch = 4, .dropout = 0.25});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Parameters(*g), Parameters(Build("nmt", 4)));
  std::map<std::string, std::string> feeds;  // dropout -> what reads its output
  int dropouts = 0;
  for (const Node& n : g->nodes()) {
    if (n.kind == OpKind::kDropout) {
      ++dropouts;
      EXPECT_DOUBLE_EQ(std::get<ScalarAttrs>(n.attrs).alpha, 0.25) << n.name;
    }
    for (TensorId in : n.inputs) {
      const std::string& name = g->tensor(in).name;
      if (name.find("dropout") != std::string::npos) feeds[name] = n.name;
    }
  }
  EXPECT_EQ(dropouts, 4);
  EXPECT_EQ(feeds["encoder.embedding.dropout"], "encoder.rnn.0");
  EXPECT_EQ(feeds["encoder.rnn.0.dropout"], "encoder.rnn.1");
  EXPECT_EQ(feeds["attention.dropout"], "classifier");
  EXPECT_THAT(feeds["decoder.embedding.dropout"], HasSubstr("decoder.rnn"));
  for (double bad : {1.0, -0.1}) {
    absl::StatusOr<Graph> refused = BuildNmt({.batch = 4, .dropout = bad});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("must be in [0, 1)"));
  }
  for (const Node& n : Build("nmt").nodes()) EXPECT_NE(n.kind, OpKind::kDropout) << n.name;
}

// The decoder step holds the decoder's, the attention's and the classifier's parameters under
// the whole model's names and shapes (trained ones load by name), none of the encoder's, and
// reads the encoder's outputs as inputs of their shapes.
TEST(ZooSmallModelsTest, NmtDecoderStepSharesTheDecodersParameters) {
  const NmtSize size{.batch = 4, .vocab = 300, .length = 12, .target_vocab = 200,
                     .dropout = 0.2, .mask_padding = true};
  absl::StatusOr<Graph> model = BuildNmt(size);
  absl::StatusOr<Graph> step = BuildNmtDecoderStep(size);
  ASSERT_TRUE(model.ok() && step.ok()) << model.status() << step.status();
  const auto whole = Parameters(*model);
  const auto part = Parameters(*step);
  EXPECT_EQ(part.size(), whole.size() - 7);  // the encoder's embedding, 2 LSTMs' 3 each
  for (const auto& [name, shape] : part) {
    EXPECT_FALSE(name.starts_with("encoder.")) << name;
    auto it = std::find_if(whole.begin(), whole.end(),
                           [&](const auto& p) { return p.first == name; });
    ASSERT_NE(it, whole.end()) << name;
    EXPECT_EQ(it->second, shape) << name;
  }
  EXPECT_EQ(ShapeOf(*step, kNmtStepEncoder), ShapeOf(*model, kNmtEncoderOutput));
  EXPECT_EQ(ShapeOf(*step, kNmtStepH0), ShapeOf(*model, kNmtEncoderH));
  EXPECT_EQ(ShapeOf(*step, kNmtStepCn), ShapeOf(*model, kNmtEncoderC));
  EXPECT_EQ(ShapeOf(*step, "classifier"), (Shape{4, 200}));
  EXPECT_EQ(ShapeOf(*step, "src_mask"), (Shape{4, 12}));
  for (const Node& n : step->nodes()) EXPECT_NE(n.kind, OpKind::kDropout) << n.name;
  absl::StatusOr<Graph> bad = BuildNmtDecoderStep({.batch = 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("nmt decoder step: batch 0"));
}

// The parameters bench/torch_step_time.py's CrnnSmall holds, and the frames the CNN leaves.
TEST(ZooSmallModelsTest, OcrLayersAndNames) {
  const Graph g = Build("ocr");
  std::vector<std::string> names;
  for (const auto& [name, shape] : Parameters(g)) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "conv0.weight", "conv0.bias", "conv1.weight", "conv1.bias",
                       "conv2.weight", "conv2.bias", "bn2.weight", "bn2.bias",
                       "conv3.weight", "conv3.bias", "bn3.weight", "bn3.bias",
                       "conv4.weight", "conv4.bias",
                       "rnn0.lstm.weight_ih", "rnn0.lstm.weight_hh", "rnn0.lstm.bias",
                       "rnn0.linear.weight", "rnn0.linear.bias",
                       "rnn1.lstm.weight_ih", "rnn1.lstm.weight_hh", "rnn1.lstm.bias",
                       "rnn1.linear.weight", "rnn1.linear.bias"}));
  EXPECT_EQ(ShapeOf(g, "conv4.weight"), (Shape{128, 128, 2, 1}));
  EXPECT_EQ(ShapeOf(g, "rnn0.lstm.weight_ih"), (Shape{2, 512, 128}));  // bi-directional
  EXPECT_EQ(ShapeOf(g, "pool3"), (Shape{32, 128, 2, 32}));
  EXPECT_EQ(ShapeOf(g, "to_sequence"), (Shape{32, 32, 128}));  // [T, B, C]
  EXPECT_EQ(ShapeOf(g, "log_probs"), (Shape{32, 32, 37}));
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.tensor(g.outputs()[0]).shape, Shape{});
}

// What exec/rank_plan.h does: build at the global batch, SetBatch to the local one.
class ZooSmallBatchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooSmallBatchTest, SetBatchGivesTheGraphBuiltAtThatBatch) {
  const Graph global = Build(GetParam());
  for (int64_t local : {16, 8}) {
    Graph g = global;
    const absl::Status status = SetBatch(g, local);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(GraphBatch(g), local);
    EXPECT_EQ(CountParameters(g), CountParameters(global));
    // Every data input's batch axis changes, nothing else of its shape.
    for (TensorId t : g.TensorsWithRole(TensorRole::kInput)) {
      Shape expected = global.tensor(t).shape;
      ASSERT_EQ(expected[global.tensor(t).batch_axis], 32) << g.tensor(t).name;
      expected[global.tensor(t).batch_axis] = local;
      EXPECT_EQ(g.tensor(t).shape, expected) << g.tensor(t).name;
    }
    // And the whole graph is the one the builder makes at that batch.
    EXPECT_EQ(GraphToJson(g), GraphToJson(Build(GetParam(), local))) << local;
  }
}

INSTANTIATE_TEST_SUITE_P(Small, ZooSmallBatchTest, ::testing::Values("nmt", "ocr"),
                         [](const auto& info) { return info.param; });

TEST(ZooSmallModelsTest, ActivationsFollowTheLocalBatch) {
  Graph nmt = Build("nmt");
  ASSERT_TRUE(SetBatch(nmt, 8).ok());
  EXPECT_EQ(ShapeOf(nmt, "src_tokens"), (Shape{8, 20}));
  EXPECT_EQ(ShapeOf(nmt, "encoder.rnn.1.h_n"), (Shape{1, 8, 256}));
  EXPECT_EQ(ShapeOf(nmt, "attention.frames"), (Shape{20 * 8, 512}));
  EXPECT_EQ(ShapeOf(nmt, "labels_flat"), (Shape{20 * 8}));
  Graph ocr = Build("ocr");
  ASSERT_TRUE(SetBatch(ocr, 16).ok());
  EXPECT_EQ(ShapeOf(ocr, "images"), (Shape{16, 1, 32, 128}));
  EXPECT_EQ(ShapeOf(ocr, "rnn0.frames"), (Shape{32 * 16, 256}));
  EXPECT_EQ(ShapeOf(ocr, "rnn1.per_frame"), (Shape{32, 16, 37}));
}

TEST(ZooSmallModelsTest, BuildsAtBatch4) {
  const Graph g = Build("nmt", 4);
  EXPECT_EQ(GraphBatch(g), 4);
  EXPECT_EQ(ShapeOf(g, "tgt_labels"), (Shape{4, 20}));
  EXPECT_EQ(ShapeOf(g, "classifier"), (Shape{20 * 4, 2000}));
  EXPECT_EQ(CountParameters(g), 3'131'600);
  EXPECT_TRUE(g.Validate().ok());
}

}  // namespace
}  // namespace tessera::graph::zoo
