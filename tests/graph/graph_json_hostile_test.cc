// Graph files: hostile input (truncations, random mutations, deep nesting,
// empty text) gives errors, never crashes, exceptions or invalid graphs.
#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "graph_test_util.h"
#include "sample_graphs.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph::testing {
namespace {

constexpr absl::string_view kSource = "hostile.json";

// A loaded graph must be a sound graph: valid, inferable, and it must write
// and read back to itself.
void ExpectSound(const Graph& g) {
  EXPECT_TRUE(g.Validate().ok());
  Graph copy = g;
  EXPECT_TRUE(InferShapes(copy).ok());
  auto again = GraphFromJson(GraphToJson(g), "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameGraph(g, *again);
}

// Loads `text`: an error must name the source; a success must be sound.
bool LoadHostile(const std::string& text) {
  auto g = GraphFromJson(text, kSource);
  if (g.ok()) {
    ExpectSound(*g);
  } else {
    EXPECT_TRUE(absl::StartsWith(g.status().message(), "hostile.json: ")) << g.status();
  }
  return g.ok();
}

std::string ValidText() { return GraphToJson(SmallNet()); }

TEST(GraphJsonHostileTest, EveryTruncationIsAnError) {
  for (const std::string& text : {GraphToJson(SmallNet()), GraphToJson(SampleGraph(OpKind::kLstm)),
                                  GraphToJson(SampleGraph(OpKind::kSplit))}) {
    const size_t end = text.rfind('}');
    ASSERT_NE(end, std::string::npos);
    for (size_t n = 0; n <= end; ++n) {
      auto g = GraphFromJson(absl::string_view(text).substr(0, n), kSource);
      ASSERT_FALSE(g.ok()) << "prefix of " << n << " bytes loaded";
      ASSERT_TRUE(absl::StartsWith(g.status().message(), "hostile.json: ")) << g.status();
    }
    EXPECT_TRUE(GraphFromJson(text.substr(0, end + 1), kSource).ok());
  }
}

TEST(GraphJsonHostileTest, RandomByteMutations) {
  const std::string text = ValidText();
  std::mt19937_64 rng(7);
  // Bytes that matter to JSON and to the format, plus anything at all.
  const std::string interesting = "{}[]\",:0123456789-+.eE \\nult\x80\xff";
  int loaded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % mutated.size();
      switch (rng() % 4) {
        case 0:
          mutated[pos] = static_cast<char>(rng());
          break;
        case 1:
          mutated[pos] = interesting[rng() % interesting.size()];
          break;
        case 2:
          mutated.erase(pos, 1 + rng() % 8);
          break;
        default:
          mutated.insert(pos, 1, interesting[rng() % interesting.size()]);
          break;
      }
      if (mutated.empty()) mutated = "{";
    }
    SCOPED_TRACE(absl::StrCat("mutation ", i));
    loaded += LoadHostile(mutated) ? 1 : 0;
    if (::testing::Test::HasFailure()) return;
  }
  // Most mutations break something; some (inside a name, a digit) still load.
  EXPECT_LT(loaded, 3000);
}

TEST(GraphJsonHostileTest, NumericFieldMutations) {
  // Replace each number of the file by extreme values.
  const std::string text = ValidText();
  const std::vector<std::string> values = {"0",
                                           "-1",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "18446744073709551616",
                                           "1e308",
                                           "-1e-308",
                                           "0.5",
                                           "1e999"};
  int replaced = 0;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (!std::isdigit(static_cast<unsigned char>(text[pos])) ||
        (pos > 0 && (std::isalnum(static_cast<unsigned char>(text[pos - 1])) ||
                     text[pos - 1] == '.' || text[pos - 1] == '-'))) {
      continue;
    }
    size_t end = pos;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                 text[end] == '.' || text[end] == '-' || text[end] == '+')) {
      ++end;
    }
    for (const std::string& v : values) {
      std::string mutated = text;
      mutated.replace(pos, end - pos, v);
      SCOPED_TRACE(absl::StrCat("byte ", pos, " := ", v));
      LoadHostile(mutated);
    }
    ++replaced;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(replaced, 50);
}

TEST(GraphJsonHostileTest, DeepNesting) {
  const auto status = [](const std::string& text) { return GraphFromJson(text, kSource).status(); };
  EXPECT_TRUE(
      HasError(status(std::string(100000, '[')), {"hostile.json: values nest more than 64"}));
  EXPECT_TRUE(HasError(status(std::string(100000, '{')), {"nest more than 64"}));
  std::string deep = R"({"format": "tessera-graph", "version": 1, "name": )";
  deep += std::string(5000, '[') + std::string(5000, ']') + "}";
  EXPECT_TRUE(HasError(status(deep), {"nest more than 64"}));
  // Nesting under the limit reaches the reader, which reports the type.
  std::string shallow = R"({"format": "tessera-graph", "version": 1, "name": )";
  shallow += std::string(50, '[') + std::string(50, ']') +
             R"(, "tensors": [], "nodes": [], "outputs": []})";
  EXPECT_TRUE(HasError(status(shallow),
                       {"hostile.json: name: expected a string, got an array of 1 values"}));
  // Brackets inside strings do not count.
  Graph g(std::string(1000, '[') + "\"" + std::string(1000, '{'));
  auto loaded = GraphFromJson(GraphToJson(g), kSource);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->name(), g.name());
}

TEST(GraphJsonHostileTest, EmptyAndGarbageText) {
  const auto status = [](absl::string_view text) { return GraphFromJson(text, kSource).status(); };
  EXPECT_TRUE(HasError(status(""), {"hostile.json: the file is empty"}));
  EXPECT_TRUE(HasError(status(" \n\t "), {"hostile.json: the file is empty"}));
  EXPECT_TRUE(HasError(status("{"), {"hostile.json: not valid JSON", "line 1"}));
  EXPECT_TRUE(HasError(status("null"), {"expected a tessera-graph JSON object, got null"}));
  EXPECT_TRUE(HasError(status("{} {}"), {"not valid JSON"}));
  EXPECT_TRUE(HasError(status(std::string("{\"a\":\"\xff\"}")), {"not valid JSON"}));
  EXPECT_TRUE(HasError(status(absl::string_view("{\0}", 3)), {"not valid JSON"}));
  EXPECT_TRUE(HasError(status("\xef\xbb\xbf{}"), {"missing field \"format\""}));  // BOM is fine
}

TEST(GraphJsonHostileTest, LargeCountsStayFast) {
  // A node with 100000 inputs (Concat) and a constant with 100000 values.
  std::string text = R"({"format": "tessera-graph", "version": 1, "name": "big", "tensors": [)";
  text += R"({"name": "a", "shape": [1, 1], "dtype": "f32", "role": "input"},)";
  text += R"({"name": "c", "shape": [100000], "dtype": "f32", "role": "constant", "data": [)";
  for (int i = 0; i < 100000; ++i) text += i ? ",0.25" : "0.25";
  text += R"(]}, {"name": "y", "role": "activation"}], "nodes": [)";
  text += R"({"name": "cat", "op": "Concat", "inputs": [)";
  for (int i = 0; i < 100000; ++i) text += i ? ",\"a\"" : "\"a\"";
  text += R"(], "outputs": ["y"], "attrs": {"axis": 0}}], "outputs": ["y"]})";
  auto g = GraphFromJson(text, kSource);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensor(2).shape, (Shape{100000, 1}));
  EXPECT_EQ(g->tensor(1).data.size(), 100000u);
}

}  // namespace
}  // namespace tessera::graph::testing
