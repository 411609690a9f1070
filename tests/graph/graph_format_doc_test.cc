// docs/graph-format.md stays true: its example loads, writes back to the same
// text, and describes the graph it claims to.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "graph_test_util.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph::testing {
namespace {

std::string FirstJsonBlock(const std::string& markdown) {
  const std::string open = "```json\n";
  const size_t begin = markdown.find(open);
  if (begin == std::string::npos) return "";
  const size_t end = markdown.find("```", begin + open.size());
  if (end == std::string::npos) return "";
  return markdown.substr(begin + open.size(), end - begin - open.size());
}

TEST(GraphFormatDocTest, ExampleLoadsAndIsExactlyWhatTheWriterWrites) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/docs/graph-format.md";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream markdown;
  markdown << in.rdbuf();
  const std::string example = FirstJsonBlock(markdown.str());
  ASSERT_FALSE(example.empty());
  auto g = GraphFromJson(example, "docs/graph-format.md");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(GraphToJson(*g), example);
  EXPECT_EQ(g->name(), "tiny_cnn");
  EXPECT_EQ(g->num_nodes(), 7);
  // Gemm's absent bias is kept as an absent input.
  const Node& fc = g->node(4);
  ASSERT_EQ(fc.inputs.size(), 3u);
  EXPECT_EQ(fc.inputs[2], kNoTensor);
  EXPECT_EQ(g->tensor(*g->FindTensor("temperature")).data, (std::vector<double>{0.5}));
  // The stated shapes are the inferred ones: 28 - 5 + 1 = 24, pooled to 12, 16 * 12 * 12 = 2304.
  EXPECT_EQ(g->tensor(*g->FindTensor("flat.out")).shape, (Shape{8, 2304}));
}

}  // namespace
}  // namespace tessera::graph::testing
