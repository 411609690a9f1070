#include "tessera/graph/graph.h"

#include <gtest/gtest.h>

#include "tessera/graph/shape_inference.h"

namespace tessera::graph {
namespace {

TEST(GraphTest, MatMulChainInfersShapes) {
  Graph g("mlp");
  TensorId x = *g.AddTensor({.name = "x", .shape = {32, 784}, .role = TensorRole::kInput});
  TensorId w = *g.AddTensor({.name = "w", .shape = {784, 10}, .role = TensorRole::kParameter});
  TensorId y = *g.AddTensor({.name = "y"});
  ASSERT_TRUE(g.AddNode({.name = "mm", .kind = OpKind::kMatMul, .inputs = {x, w}, .outputs = {y}}).ok());
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(g.tensor(y).shape, (Shape{32, 10}));
}

TEST(GraphTest, DuplicateTensorNameIsRejected) {
  Graph g;
  ASSERT_TRUE(g.AddTensor({.name = "a"}).ok());
  EXPECT_EQ(g.AddTensor({.name = "a"}).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(GraphTest, CycleIsReported) {
  Graph g("loop");
  TensorId a = *g.AddTensor({.name = "a"});
  TensorId b = *g.AddTensor({.name = "b"});
  ASSERT_TRUE(g.AddNode({.name = "n1", .kind = OpKind::kRelu, .inputs = {a}, .outputs = {b}}).ok());
  ASSERT_TRUE(g.AddNode({.name = "n2", .kind = OpKind::kRelu, .inputs = {b}, .outputs = {a}}).ok());
  auto order = g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos);
}

TEST(GraphTest, ValidateRejectsActivationReadButNeverProduced) {
  Graph g("g");
  TensorId x = *g.AddTensor({.name = "x", .shape = {2}, .role = TensorRole::kInput});
  TensorId h = *g.AddTensor({.name = "h", .shape = {2}});  // activation nobody produces
  TensorId y = *g.AddTensor({.name = "y"});
  ASSERT_TRUE(g.AddNode({.name = "add", .kind = OpKind::kAdd, .inputs = {x, h}, .outputs = {y}}).ok());
  const absl::Status s = g.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("activation 'h' is read by node 'add' but no node produces it"),
            std::string::npos)
      << s;
}

TEST(GraphTest, ValidateRejectsUnproducedActivationOutput) {
  Graph g("g");
  TensorId h = *g.AddTensor({.name = "h", .shape = {2}});
  g.AddOutput(h);
  const absl::Status s = g.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("graph output 'h'"), std::string::npos) << s;
}

TEST(GraphTest, ValidateAcceptsUnusedActivationAndProducedOnes) {
  Graph g("g");
  TensorId x = *g.AddTensor({.name = "x", .shape = {2}, .role = TensorRole::kInput});
  TensorId y = *g.AddTensor({.name = "y"});
  ASSERT_TRUE(g.AddTensor({.name = "unused"}).ok());
  ASSERT_TRUE(g.AddNode({.name = "r", .kind = OpKind::kRelu, .inputs = {x}, .outputs = {y}}).ok());
  g.AddOutput(y);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(GraphTest, NodeMayNotListAnOutputTwice) {
  Graph g("g");
  TensorId x = *g.AddTensor({.name = "x", .shape = {6, 2}, .role = TensorRole::kInput});
  TensorId y = *g.AddTensor({.name = "y"});
  auto added = g.AddNode({.name = "split", .kind = OpKind::kSplit, .inputs = {x}, .outputs = {y, y},
                          .attrs = SplitAttrs{.axis = 0, .sizes = {3, 3}}});
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("lists output tensor 'y' more than once"),
            std::string::npos)
      << added.status();
}

}  // namespace
}  // namespace tessera::graph
