// GraphBuilder layers: shapes and parameter counts against PyTorch's formulas.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera/graph/builder.h"
#include "tessera/graph/parameters.h"

namespace tessera::graph {
namespace {

using ::testing::HasSubstr;

Shape ShapeOf(const Graph& g, absl::string_view name) {
  auto id = g.FindTensor(name);
  return id ? g.tensor(*id).shape : Shape{-1};
}

TEST(BuilderLayersTest, Conv2dMatchesTorchOutputSizesAndWeights) {
  GraphBuilder b("conv");
  Value x = b.Input("x", {2, 3, 224, 224});
  // AlexNet's first layer: (224 + 4 - 11) / 4 + 1 = 55.
  Value y = b.Conv2d(x, 64, 11, "c1", {.stride = 4, .padding = 2});
  EXPECT_EQ(y.shape(), (Shape{2, 64, 55, 55}));
  // Non-square kernel, stride and padding: H (55+2-3)/2+1 = 28, W (55+0-1)/1+1 = 55.
  Value z = b.Conv2d(y, 32, {3, 1}, "c2", {.stride = {2, 1}, .padding = {1, 0}, .bias = false});
  EXPECT_EQ(z.shape(), (Shape{2, 32, 28, 55}));
  // Grouped, dilated: span 2*(3-1)+1 = 5, (28+2-5)+1 = 26 and (55+2-5)+1 = 53.
  Value g = b.Conv2d(z, 64, 3, "c3", {.padding = 1, .dilation = 2, .groups = 4});
  EXPECT_EQ(g.shape(), (Shape{2, 64, 26, 53}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(ShapeOf(b.graph(), "c1.weight"), (Shape{64, 3, 11, 11}));
  EXPECT_EQ(ShapeOf(b.graph(), "c2.weight"), (Shape{32, 64, 3, 1}));
  EXPECT_FALSE(b.graph().FindTensor("c2.bias").has_value());
  EXPECT_EQ(ShapeOf(b.graph(), "c3.weight"), (Shape{64, 8, 3, 3}));
  EXPECT_EQ(CountParameters(b.graph()),
            64 * 3 * 121 + 64 + 32 * 64 * 3 + 64 * 8 * 9 + 64);
}

TEST(BuilderLayersTest, Conv1dShapes) {
  GraphBuilder b("conv1d");
  Value x = b.Input("x", {4, 16, 100});
  Value y = b.Conv1d(x, 32, 5, "c", {.stride = 2, .padding = 2});
  EXPECT_EQ(y.shape(), (Shape{4, 32, 50}));
  EXPECT_EQ(ShapeOf(b.graph(), "c.weight"), (Shape{32, 16, 5}));
}

TEST(BuilderLayersTest, BatchNormStatisticsAreConstantsNotParameters) {
  GraphBuilder b("bn");
  Value x = b.Input("x", {2, 8, 5, 5});
  Value y = b.BatchNorm2d(x, "bn1");
  ASSERT_TRUE(y.valid()) << b.status();
  const Graph& g = b.graph();
  EXPECT_EQ(g.tensor(*g.FindTensor("bn1.weight")).role, TensorRole::kParameter);
  EXPECT_EQ(g.tensor(*g.FindTensor("bn1.bias")).role, TensorRole::kParameter);
  const Tensor& mean = g.tensor(*g.FindTensor("bn1.running_mean"));
  const Tensor& var = g.tensor(*g.FindTensor("bn1.running_var"));
  EXPECT_EQ(mean.role, TensorRole::kConstant);
  EXPECT_EQ(var.role, TensorRole::kConstant);
  EXPECT_EQ(var.data, std::vector<double>(8, 1.0));
  EXPECT_EQ(CountParameters(g), 16);
}

TEST(BuilderLayersTest, PoolsHandleNonSquareWindowsAndCeilMode) {
  GraphBuilder b("pool");
  Value x = b.Input("x", {1, 4, 8, 25});
  // CRNN's pool: kernel 2x2, stride (2,1), padding (0,1): H 4, W (25+2-2)/1+1 = 26.
  EXPECT_EQ(b.MaxPool2d(x, 2, "p1", {.stride = {2, 1}, .padding = {0, 1}}).shape(),
            (Shape{1, 4, 4, 26}));
  // Default stride is the kernel; ceil mode rounds up: ceil((25-3)/3)+1 = 9 (floor: 8).
  EXPECT_EQ(b.MaxPool2d(x, 3, "p2").shape(), (Shape{1, 4, 2, 8}));
  EXPECT_EQ(b.MaxPool2d(x, 3, "p3", {.ceil_mode = true}).shape(), (Shape{1, 4, 3, 9}));
  Value a = b.AvgPool2d(x, {2, 5}, "p4", {.stride = {2, 5}});
  EXPECT_EQ(a.shape(), (Shape{1, 4, 4, 5}));
  EXPECT_EQ(b.GlobalAvgPool(x).shape(), (Shape{1, 4, 1, 1}));
  ASSERT_TRUE(b.ok()) << b.status();
  const Node& avg = b.graph().node(b.graph().tensor(a.id()).producer);
  EXPECT_TRUE(std::get<PoolAttrs>(avg.attrs).count_include_pad);
}

TEST(BuilderLayersTest, LinearOnRank3KeepsWeightOutByIn) {
  GraphBuilder b("lin3");
  Value x = b.Input("x", {4, 7, 16});
  Value y = b.Linear(x, 8, "proj");
  EXPECT_EQ(y.shape(), (Shape{4, 7, 8}));
  EXPECT_EQ(y.name(), "proj.unflatten");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(ShapeOf(b.graph(), "proj.weight"), (Shape{8, 16}));
  EXPECT_EQ(ShapeOf(b.graph(), "proj"), (Shape{28, 8}));  // the Gemm's 2-D output
  const Node& gemm = b.graph().node(b.graph().tensor(*b.graph().FindTensor("proj")).producer);
  EXPECT_EQ(gemm.kind, OpKind::kGemm);
  EXPECT_EQ(gemm.name, "proj");
}

TEST(BuilderLayersTest, TiedWeightIsOneParameterCountedOnce) {
  GraphBuilder b("tied");
  Value ids = b.Input("ids", {2, 5}, DType::kI64);
  Value table = b.Parameter("wte.weight", {100, 16});
  Value e = b.Embedding(ids, 100, 16, "wte", {.weight = table});
  EXPECT_EQ(e.shape(), (Shape{2, 5, 16}));
  Value flat = e.Reshape({-1, 16});
  Value logits = b.Linear(flat, 100, "head", {.bias = false, .weight = table});
  EXPECT_EQ(logits.shape(), (Shape{10, 100}));
  ASSERT_TRUE(b.ok()) << b.status();
  const Graph& g = b.graph();
  EXPECT_FALSE(g.FindTensor("head.weight").has_value());
  EXPECT_FALSE(g.FindTensor("wte.weight_1").has_value());
  EXPECT_EQ(g.TensorsWithRole(TensorRole::kParameter).size(), 1u);
  EXPECT_EQ(CountParameters(g), 100 * 16);
  const Node& head = g.node(g.tensor(logits.id()).producer);
  EXPECT_EQ(head.inputs[1], table.id());
}

TEST(BuilderLayersTest, TiedWeightOfWrongShapeIsRejected) {
  GraphBuilder b("tied_bad");
  Value x = b.Input("x", {2, 16});
  Value w = b.Parameter("w", {16, 100});
  EXPECT_FALSE(b.Linear(x, 100, "head", {.weight = w}).valid());
  const std::string msg(b.status().message());
  EXPECT_THAT(msg, HasSubstr("'head' (Linear)"));
  EXPECT_THAT(msg, HasSubstr("[100,16]"));
}

TEST(BuilderLayersTest, EmbeddingNeedsIntegerIds) {
  GraphBuilder b("emb");
  Value ids = b.Input("ids", {2, 5});
  EXPECT_FALSE(b.Embedding(ids, 10, 4, "emb").valid());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("node 'emb' (Embedding)"));
}

TEST(BuilderLayersTest, LayerNormParametersCoverTheNormalizedDims) {
  GraphBuilder b("ln");
  Value x = b.Input("x", {2, 5, 32});
  EXPECT_EQ(b.LayerNorm(x, "ln").shape(), (Shape{2, 5, 32}));
  EXPECT_EQ(b.LayerNorm(x, "ln2", {.axis = 1}).shape(), (Shape{2, 5, 32}));
  EXPECT_EQ(ShapeOf(b.graph(), "ln.weight"), Shape{32});
  EXPECT_EQ(ShapeOf(b.graph(), "ln2.bias"), (Shape{5, 32}));
}

TEST(BuilderLayersTest, LstmMatchesNnLstmParameterCount) {
  // nn.LSTM(10, 20, num_layers=2, bidirectional=True): per layer and direction
  // 4H(I + H) + 8H; layer 0 has I = 10, layer 1 has I = 2H = 40.
  GraphBuilder b("lstm");
  Value x = b.Input("x", {7, 3, 10});
  Value y = b.Lstm(x, 20, "rnn", {.num_layers = 2, .bidirectional = true, .dropout = 0.1});
  EXPECT_EQ(y.shape(), (Shape{7, 3, 40}));
  ASSERT_TRUE(b.ok()) << b.status();
  const int64_t l0 = 2 * (4 * 20 * (10 + 20) + 8 * 20);
  const int64_t l1 = 2 * (4 * 20 * (40 + 20) + 8 * 20);
  EXPECT_EQ(CountParameters(b.graph()), l0 + l1);
  EXPECT_EQ(l0 + l1, 15040);
  EXPECT_EQ(ShapeOf(b.graph(), "rnn.0.weight_ih"), (Shape{2, 80, 10}));
  EXPECT_EQ(ShapeOf(b.graph(), "rnn.1.weight_ih"), (Shape{2, 80, 40}));
  EXPECT_EQ(ShapeOf(b.graph(), "rnn.1.weight_hh"), (Shape{2, 80, 20}));
  EXPECT_EQ(ShapeOf(b.graph(), "rnn.1.bias"), (Shape{2, 160}));
  EXPECT_TRUE(b.graph().FindTensor("rnn.0.dropout").has_value());
  EXPECT_FALSE(b.graph().FindTensor("rnn.1.dropout").has_value());
  int lstm_nodes = 0;
  for (const Node& n : b.graph().nodes()) lstm_nodes += n.kind == OpKind::kLstm;
  EXPECT_EQ(lstm_nodes, 2);
}

TEST(BuilderLayersTest, SingleLayerUnidirectionalLstmKeepsItsName) {
  GraphBuilder b("lstm1");
  Value x = b.Input("x", {5, 2, 8});
  Value y = b.Lstm(x, 16, "enc");
  EXPECT_EQ(y.shape(), (Shape{5, 2, 16}));
  EXPECT_EQ(ShapeOf(b.graph(), "enc.weight_ih"), (Shape{1, 64, 8}));
  EXPECT_EQ(ShapeOf(b.graph(), "enc.h_n"), (Shape{1, 2, 16}));
}

TEST(BuilderLayersTest, MultiHeadAttentionShapesParamsAndCausalMask) {
  GraphBuilder b("mha");
  Value x = b.Input("x", {2, 4, 32});
  Value y = b.MultiHeadAttention(x, 4, "attn", {.causal = true, .dropout = 0.1});
  EXPECT_EQ(y.shape(), (Shape{2, 4, 32}));
  ASSERT_TRUE(b.ok()) << b.status();
  const Graph& g = b.graph();
  EXPECT_EQ(CountParameters(g), 4 * (32 * 32 + 32));
  EXPECT_EQ(ShapeOf(g, "attn.scores"), (Shape{2, 4, 4, 4}));
  EXPECT_EQ(ShapeOf(g, "attn.k_heads"), (Shape{2, 4, 8, 4}));
  const Tensor& scale = g.tensor(*g.FindTensor("attn.scale"));
  ASSERT_EQ(scale.data.size(), 1u);
  EXPECT_DOUBLE_EQ(scale.data[0], 1.0 / std::sqrt(8.0));
  const Tensor& mask = g.tensor(*g.FindTensor("attn.causal_mask"));
  ASSERT_EQ(mask.data.size(), 16u);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (j <= i) {
        EXPECT_EQ(mask.data[i * 4 + j], 0.0) << i << "," << j;
      } else {
        EXPECT_LT(mask.data[i * 4 + j], -1e8) << i << "," << j;
      }
    }
  }
}

TEST(BuilderLayersTest, CrossAttentionUsesMemoryLength) {
  GraphBuilder b("xattn");
  Value q = b.Input("q", {2, 3, 16});
  Value m = b.Input("m", {2, 9, 16});
  Value y = b.MultiHeadAttention(q, 2, "x", {.memory = m});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 16}));
  EXPECT_EQ(ShapeOf(b.graph(), "x.scores"), (Shape{2, 2, 3, 9}));
  EXPECT_FALSE(b.MultiHeadAttention(q, 5, "bad").valid());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("num_heads=5"));
}

TEST(BuilderLayersTest, LayoutOpsSplitConcatSliceGatherPad) {
  GraphBuilder b("layout");
  Value x = b.Input("x", {4, 10});
  std::vector<Value> parts = b.Split(x, {3, 7}, 1, "sp");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name(), "sp.0");
  EXPECT_EQ(parts[1].shape(), (Shape{4, 7}));
  EXPECT_EQ(b.Concat({parts[1], parts[0]}, 1).shape(), (Shape{4, 10}));
  EXPECT_EQ(b.Slice(x, {2}, {8}, {1}).shape(), (Shape{4, 6}));
  Value idx = b.Constant("idx", {3}, {0, 2, 1}, DType::kI64);
  EXPECT_EQ(b.Gather(x, idx, 0).shape(), (Shape{3, 10}));
  EXPECT_EQ(b.Pad(x, {0, 1, 0, 2}).shape(), (Shape{4, 13}));
  EXPECT_EQ(x.Unsqueeze({0}).Squeeze({0}).Flatten(0).shape(), (Shape{1, 40}));
  EXPECT_EQ(x.Transpose({1, 0}).shape(), (Shape{10, 4}));
  EXPECT_EQ(b.ReduceMean(x, {1}, false).shape(), Shape{4});
  EXPECT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b.Split(x, {3, 3}, 1).empty());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("split sizes add up to 6"));
}

TEST(BuilderLayersTest, CtcLossTakesSeqFirstLogProbs) {
  GraphBuilder b("ctc");
  Value logits = b.Input("logits", {26, 4, 37});
  Value targets = b.Input("targets", {4, 10}, DType::kI64);
  Value in_len = b.Input("in_len", {4}, DType::kI64);
  Value tgt_len = b.Input("tgt_len", {4}, DType::kI64);
  Value loss = b.CtcLoss(logits.LogSoftmax(-1), targets, in_len, tgt_len, "ctc");
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_TRUE(b.ok()) << b.status();
}

TEST(BuilderLayersTest, DropoutZeroIsIdentityAndBadRatioFails) {
  GraphBuilder b("drop");
  Value x = b.Input("x", {3});
  EXPECT_EQ(x.Dropout(0.0).id(), x.id());
  EXPECT_EQ(x.Dropout(0.5).shape(), Shape{3});
  EXPECT_FALSE(x.Dropout(1.5).valid());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("p=1.5"));
}

}  // namespace
}  // namespace tessera::graph
