// RunsAsWinograd: exactly the 2-D 3x3 stride-1, dilation-1, one-group convolutions.
#include "tessera/costmodel/winograd.h"

#include <gtest/gtest.h>

#include <string>

#include "tessera/graph/builder.h"

namespace tessera::costmodel {
namespace {

using graph::GraphBuilder;

// A graph of one convolution on [2, 8, 16, 16] (or [2, 8, 16] for 1-D), checked by name.
bool Winograd(const std::string& what, graph::Size2 kernel, graph::Conv2dOptions o = {}) {
  GraphBuilder b("w");
  graph::Value x = b.Input("x", {2, 8, 16, 16});
  b.Output(b.Conv2d(x, 8, kernel, "conv", o));
  absl::StatusOr<graph::Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << what << ": " << g.status();
  if (!g.ok()) return false;
  for (graph::NodeId id = 0; id < g->num_nodes(); ++id) {
    if (g->node(id).name == "conv") return RunsAsWinograd(*g, g->node(id));
  }
  ADD_FAILURE() << what << ": no node named conv";
  return false;
}

TEST(WinogradTest, ThreeByThreeStrideOneConvolutions) {
  EXPECT_TRUE(Winograd("3x3", 3));
  EXPECT_TRUE(Winograd("3x3 padded", 3, {.padding = 1}));
  EXPECT_TRUE(Winograd("3x3 without bias", 3, {.bias = false}));
}

TEST(WinogradTest, EveryOtherConvolutionRunsDirect) {
  EXPECT_FALSE(Winograd("1x1", 1));
  EXPECT_FALSE(Winograd("5x5", 5));
  EXPECT_FALSE(Winograd("3x1", {3, 1}));
  EXPECT_FALSE(Winograd("stride 2", 3, {.stride = 2}));
  EXPECT_FALSE(Winograd("stride 1x2", 3, {.stride = {1, 2}}));
  EXPECT_FALSE(Winograd("dilated", 3, {.dilation = 2}));
  EXPECT_FALSE(Winograd("grouped", 3, {.groups = 2}));
  EXPECT_FALSE(Winograd("depthwise", 3, {.groups = 8}));
}

TEST(WinogradTest, OtherOpsAndOneDimensionalConvolutionsAreNot) {
  GraphBuilder b("w");
  graph::Value x = b.Input("x", {2, 8, 16});
  graph::Value y = b.Conv1d(x, 8, 3, "conv1d");
  b.Output(b.Linear(b.Flatten(y, 1, "flat"), 4, "fc"));
  absl::StatusOr<graph::Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  for (graph::NodeId id = 0; id < g->num_nodes(); ++id) {
    EXPECT_FALSE(RunsAsWinograd(*g, g->node(id))) << g->node(id).name;
  }
}

}  // namespace
}  // namespace tessera::costmodel
