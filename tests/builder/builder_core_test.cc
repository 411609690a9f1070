// GraphBuilder core: the MLP of the header, names, scopes, roles, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera/graph/builder.h"
#include "tessera/graph/parameters.h"

namespace tessera::graph {
namespace {

using ::testing::HasSubstr;

const Node* FindNode(const Graph& g, absl::string_view name) {
  for (const Node& n : g.nodes()) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

TEST(BuilderCoreTest, MlpOfTheHeaderHasPyTorchShapesAndNames) {
  GraphBuilder b("mlp");
  Value x = b.Input("x", {32, 784});
  Value labels = b.Input("labels", {32}, DType::kI64);
  Value h = b.Linear(x, 512, "fc1").Relu();
  Value logits = b.Linear(h, 10, "fc2");
  Value loss = b.SoftmaxCrossEntropy(logits, labels, "loss");
  b.Output(loss);
  EXPECT_EQ(h.shape(), (Shape{32, 512}));
  EXPECT_EQ(logits.shape(), (Shape{32, 10}));
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_EQ(h.name(), "relu_1");
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& w1 = g->tensor(*g->FindTensor("fc1.weight"));
  EXPECT_EQ(w1.shape, (Shape{512, 784}));
  EXPECT_EQ(w1.role, TensorRole::kParameter);
  EXPECT_EQ(g->tensor(*g->FindTensor("fc1.bias")).shape, Shape{512});
  EXPECT_EQ(g->tensor(*g->FindTensor("labels")).dtype, DType::kI64);
  EXPECT_EQ(g->tensor(*g->FindTensor("x")).role, TensorRole::kInput);
  const Node* fc1 = FindNode(*g, "fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->kind, OpKind::kGemm);
  EXPECT_TRUE(std::get<GemmAttrs>(fc1->attrs).trans_b);
  EXPECT_EQ(CountParameters(*g), 784 * 512 + 512 + 512 * 10 + 10);
  EXPECT_EQ(g->num_nodes(), 4);  // fc1, relu_1, fc2, loss
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->tensor(g->outputs()[0]).name, "loss");
}

TEST(BuilderCoreTest, AutomaticNamesCountPerKindAndScope) {
  GraphBuilder b("auto");
  Value x = b.Input("x", {2, 3});
  Value a = x.Relu();
  Value c = a.Relu();
  Value t = c.Tanh();
  EXPECT_EQ(a.name(), "relu_1");
  EXPECT_EQ(c.name(), "relu_2");
  EXPECT_EQ(t.name(), "tanh_1");
  {
    auto scope = b.Scope("enc");
    EXPECT_EQ(x.Relu().name(), "enc.relu_1");
    EXPECT_EQ(b.Linear(x, 4).name(), "enc.linear_1");
  }
  EXPECT_EQ(x.Relu().name(), "relu_3");
  EXPECT_TRUE(b.ok());
}

TEST(BuilderCoreTest, NestedScopesPrefixLayerAndParameterNames) {
  GraphBuilder b("scoped");
  Value x = b.Input("x", {2, 8});
  {
    auto encoder = b.Scope("encoder");
    auto layer = b.Scope("layers.0");
    b.Linear(x, 4, "fc");
  }
  Value y = b.Linear(x, 4, "fc");  // same local name outside the scope: fine
  b.Output(y);
  auto g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->FindTensor("encoder.layers.0.fc.weight").has_value());
  EXPECT_TRUE(g->FindTensor("encoder.layers.0.fc.bias").has_value());
  EXPECT_TRUE(g->FindTensor("fc.weight").has_value());
  EXPECT_NE(FindNode(*g, "encoder.layers.0.fc"), nullptr);
}

TEST(BuilderCoreTest, ReusedNameIsAnErrorAndLaterCallsAreNoOps) {
  GraphBuilder b("dup");
  Value x = b.Input("x", {2, 8});
  Value a = b.Linear(x, 4, "fc");
  ASSERT_TRUE(a.valid());
  Value again = b.Linear(x, 4, "fc");
  EXPECT_FALSE(again.valid());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("'fc'"));
  // Everything after the first error returns invalid Values without crashing.
  Value r = again.Relu().Reshape({4, 2}).Softmax();
  EXPECT_FALSE(r.valid());
  EXPECT_FALSE(b.Linear(a, 3, "other").valid());
  EXPECT_FALSE(b.Conv2d(x, 3, 3).valid());
  b.Output(r);
  auto g = std::move(b).Build();
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(BuilderCoreTest, ShapeErrorNamesTheNodeAndTheShapes) {
  GraphBuilder b("bad");
  Value x = b.Input("x", {2, 3});
  Value w = b.Parameter("w", {4, 5});
  Value y = b.MatMul(x, w, "mm");
  EXPECT_FALSE(y.valid());
  Value z = b.Linear(y, 10, "after");
  EXPECT_FALSE(z.valid());
  auto g = std::move(b).Build();
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_THAT(msg, HasSubstr("node 'mm' (MatMul)"));
  EXPECT_THAT(msg, HasSubstr("'x' [2,3] f32"));
  EXPECT_THAT(msg, HasSubstr("'w' [4,5] f32"));
}

TEST(BuilderCoreTest, BadLayerInputNamesLayerAndShape) {
  GraphBuilder b("bad_conv");
  Value x = b.Input("x", {8, 784});
  Value y = b.Conv2d(x, 16, 3, "conv1");
  EXPECT_FALSE(y.valid());
  const std::string msg(b.status().message());
  EXPECT_THAT(msg, HasSubstr("'conv1' (Conv2d)"));
  EXPECT_THAT(msg, HasSubstr("[8,784]"));
}

TEST(BuilderCoreTest, KernelLargerThanInputFailsInInference) {
  GraphBuilder b("small");
  Value x = b.Input("x", {1, 3, 4, 4});
  EXPECT_FALSE(b.Conv2d(x, 8, 7, "big").valid());
  const std::string msg(b.status().message());
  EXPECT_THAT(msg, HasSubstr("node 'big' (Conv)"));
  EXPECT_THAT(msg, HasSubstr("[1,3,4,4]"));
}

TEST(BuilderCoreTest, DefaultValueAndForeignValueAreReportedNotCrashed) {
  Value none;
  EXPECT_FALSE(none.Relu().valid());
  EXPECT_EQ(none.shape(), Shape{});
  EXPECT_EQ(none.name(), "");

  GraphBuilder other("other");
  Value foreign = other.Input("x", {2});
  GraphBuilder b("mine");
  EXPECT_FALSE(b.Relu(foreign).valid());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("another GraphBuilder"));

  GraphBuilder c("defaults");
  EXPECT_FALSE(c.Add(Value(), Value(), "sum").valid());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("'sum'"));
}

TEST(BuilderCoreTest, BuildWithoutOutputsFails) {
  GraphBuilder b("no_out");
  b.Input("x", {2}).Relu();
  auto g = std::move(b).Build();
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("no outputs"));
}

TEST(BuilderCoreTest, ConstantsKeepDataAndCheckItsSize) {
  GraphBuilder b("consts");
  Value c = b.Constant("c", {2, 2}, {1, 2, 3, 4});
  Value s = b.Scalar(0.5);
  ASSERT_TRUE(c.valid() && s.valid());
  EXPECT_EQ(b.graph().tensor(c.id()).data, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(b.graph().tensor(s.id()).role, TensorRole::kConstant);
  EXPECT_EQ(s.name(), "const_1");
  EXPECT_FALSE(b.Constant("bad", {3}, {1, 2}).valid());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("'bad'"));
}

TEST(BuilderCoreTest, OperatorsBroadcastAndFindLooksUpFullNames) {
  GraphBuilder b("ops");
  Value x = b.Input("x", {4, 3});
  Value bias = b.Parameter("bias", {3});
  Value y = (x + bias) * x - x / x;
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(b.Find("bias").id(), bias.id());
  EXPECT_FALSE(b.Find("nope").valid());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera::graph
