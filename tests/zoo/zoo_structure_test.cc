// The zoo models' structure: the shapes and sharing each published network has.
#include <gtest/gtest.h>

#include "absl/strings/match.h"

#include "tessera/graph/parameters.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::graph::zoo {
namespace {

Graph Build(absl::string_view name, int64_t batch) {
  absl::StatusOr<Graph> g = BuildZooModel(name, batch);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

Shape ShapeOf(const Graph& g, absl::string_view name) {
  auto id = g.FindTensor(name);
  return id ? g.tensor(*id).shape : Shape{-1};
}

int CountKind(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

// Nodes that read tensor `name`.
int Readers(const Graph& g, absl::string_view name) {
  const auto id = g.FindTensor(name);
  if (!id) return -1;
  return static_cast<int>(g.Consumers()[*id].size());
}

TEST(ZooStructureTest, AlexNetFeatureMapsAndClassifier) {
  Graph g = Build("alexnet", 2);
  EXPECT_EQ(ShapeOf(g, "features.0"), (Shape{2, 64, 55, 55}));
  EXPECT_EQ(ShapeOf(g, "features.12"), (Shape{2, 256, 6, 6}));
  EXPECT_EQ(ShapeOf(g, "classifier.1.weight"), (Shape{4096, 9216}));
  EXPECT_EQ(ShapeOf(g, "classifier.6"), (Shape{2, 1000}));
  EXPECT_EQ(CountKind(g, OpKind::kConv), 5);
  EXPECT_EQ(CountKind(g, OpKind::kGemm), 3);
}

TEST(ZooStructureTest, Vgg16HasThirteenConvsAndFiveBlocks) {
  Graph g = Build("vgg16", 1);
  EXPECT_EQ(CountKind(g, OpKind::kConv), 13);
  EXPECT_EQ(CountKind(g, OpKind::kMaxPool), 5);
  EXPECT_EQ(ShapeOf(g, "features.30"), (Shape{1, 512, 7, 7}));
  EXPECT_EQ(ShapeOf(g, "classifier.0.weight"), (Shape{4096, 25088}));
}

TEST(ZooStructureTest, ResNet50IsV15WithConstantRunningStats) {
  Graph g = Build("resnet50", 2);
  EXPECT_EQ(CountKind(g, OpKind::kConv), 53);  // 1 + 16 * 3 + 4 downsamples
  EXPECT_EQ(CountKind(g, OpKind::kBatchNorm), 53);
  // v1.5: the stride is on the 3x3 conv of the first block of layers 2-4.
  EXPECT_EQ(ShapeOf(g, "layer2.0.conv1"), (Shape{2, 128, 56, 56}));
  EXPECT_EQ(ShapeOf(g, "layer2.0.conv2"), (Shape{2, 128, 28, 28}));
  EXPECT_EQ(ShapeOf(g, "layer4.2.bn3"), (Shape{2, 2048, 7, 7}));
  EXPECT_EQ(ShapeOf(g, "fc.weight"), (Shape{1000, 2048}));
  EXPECT_FALSE(g.FindTensor("conv1.bias").has_value());
  int stats = 0;
  for (TensorId t : g.TensorsWithRole(TensorRole::kConstant)) {
    stats += absl::EndsWith(g.tensor(t).name, ".running_mean") ||
             absl::EndsWith(g.tensor(t).name, ".running_var");
  }
  EXPECT_EQ(stats, 2 * 53);
}

TEST(ZooStructureTest, GnmtSharesItsEmbeddingAndStacksEightLstms) {
  Graph g = Build("gnmt", 4);
  EXPECT_EQ(CountKind(g, OpKind::kLstm), 8);  // 4 encoder, att_rnn.rnn, 3 decoder
  EXPECT_EQ(CountKind(g, OpKind::kEmbedding), 2);
  EXPECT_EQ(Readers(g, "encoder.embedder.weight"), 2);
  EXPECT_FALSE(g.FindTensor("decoder.embedder.weight").has_value());
  EXPECT_EQ(ShapeOf(g, "encoder.embedder.weight"), (Shape{32320, 1024}));
  EXPECT_EQ(ShapeOf(g, "encoder.rnn_layers.0.weight_ih"), (Shape{2, 4096, 1024}));
  EXPECT_EQ(ShapeOf(g, "encoder.rnn_layers.0"), (Shape{50, 2, 4, 1024}));  // [T, dirs, B, H]
  EXPECT_EQ(ShapeOf(g, "encoder.rnn_layers.1.weight_ih"), (Shape{1, 4096, 2048}));
  EXPECT_EQ(ShapeOf(g, "encoder.rnn_layers.3.weight_ih"), (Shape{1, 4096, 1024}));
  EXPECT_EQ(ShapeOf(g, "decoder.att_rnn.rnn.weight_ih"), (Shape{1, 4096, 1024}));
  EXPECT_EQ(ShapeOf(g, "decoder.rnn_layers.2.weight_ih"), (Shape{1, 4096, 2048}));
  EXPECT_EQ(ShapeOf(g, "decoder.att_rnn.attn.normalize_scalar"), Shape{1});
  EXPECT_EQ(ShapeOf(g, "decoder.att_rnn.attn.linear_q.weight"), (Shape{1024, 1024}));
  EXPECT_FALSE(g.FindTensor("decoder.att_rnn.attn.linear_q.bias").has_value());
  EXPECT_EQ(ShapeOf(g, "decoder.classifier.classifier"), (Shape{50 * 4, 32320}));
}

TEST(ZooStructureTest, CrnnHas26FramesOf37Classes) {
  Graph g = Build("crnn", 2);
  EXPECT_EQ(CountKind(g, OpKind::kConv), 7);
  EXPECT_EQ(CountKind(g, OpKind::kBatchNorm), 2);
  EXPECT_TRUE(g.FindTensor("cnn.batchnorm4.weight").has_value());
  EXPECT_TRUE(g.FindTensor("cnn.batchnorm5.weight").has_value());
  EXPECT_EQ(ShapeOf(g, "cnn.pooling2"), (Shape{2, 256, 4, 26}));
  EXPECT_EQ(ShapeOf(g, "cnn.pooling3"), (Shape{2, 512, 2, 27}));
  EXPECT_EQ(ShapeOf(g, "cnn.relu6"), (Shape{2, 512, 1, 26}));
  EXPECT_EQ(ShapeOf(g, "cnn.conv6.weight"), (Shape{512, 512, 2, 2}));
  EXPECT_EQ(CountKind(g, OpKind::kLstm), 2);
  EXPECT_EQ(ShapeOf(g, "rnn.0.rnn.weight_ih"), (Shape{2, 1024, 512}));
  EXPECT_EQ(ShapeOf(g, "rnn.0.embedding.weight"), (Shape{256, 512}));
  EXPECT_EQ(ShapeOf(g, "rnn.1.rnn.weight_ih"), (Shape{2, 1024, 256}));
  EXPECT_EQ(ShapeOf(g, "rnn.1.per_frame"), (Shape{26, 2, 37}));
  EXPECT_EQ(CountKind(g, OpKind::kCtcLoss), 1);
}

TEST(ZooStructureTest, TransformerTiesItsHeadAndSharesTheMask) {
  Graph g = Build("transformer", 1);
  EXPECT_EQ(CountKind(g, OpKind::kLayerNorm), 25);
  EXPECT_EQ(CountKind(g, OpKind::kSoftmax), 12);
  EXPECT_EQ(Readers(g, "wte.weight"), 2);  // the token embedding and lm_head
  EXPECT_FALSE(g.FindTensor("lm_head.weight").has_value());
  EXPECT_EQ(Readers(g, "causal_mask"), 12);
  EXPECT_EQ(ShapeOf(g, "wpe.weight"), (Shape{1024, 768}));
  EXPECT_EQ(ShapeOf(g, "h.11.attn.scores"), (Shape{1, 12, 1024, 1024}));
  EXPECT_EQ(ShapeOf(g, "h.0.mlp.c_fc.weight"), (Shape{3072, 768}));
  EXPECT_EQ(ShapeOf(g, "lm_head"), (Shape{1024, 50257}));
}

}  // namespace
}  // namespace tessera::graph::zoo
