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

}  // namespace
}  // namespace tessera::graph
