// The seed corpus of fuzz_graph_json (fuzz/corpus/, docs/fuzzing.md) stays loadable: a
// graph file for every op of the catalogue, zoo models and imported test models.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph {
namespace {

namespace fs = std::filesystem;

TEST(GraphJsonFuzzCorpus, EverySeedLoadsAndEveryOpHasOne) {
  const fs::path dir = fs::path(TESSERA_SOURCE_DIR) / "fuzz" / "corpus" / "fuzz_graph_json";
  std::set<OpKind> ops;
  int seeds = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    auto g = GraphFromJson(text.str(), entry.path().filename().string());
    ASSERT_TRUE(g.ok()) << g.status() << " (regenerate: build-fuzz/bin/fuzz_make_corpus fuzz/corpus)";
    for (const Node& n : g->nodes()) ops.insert(n.kind);
    ++seeds;
  }
  EXPECT_GE(seeds, 50);
  for (OpKind kind : AllOpKinds()) EXPECT_TRUE(ops.count(kind)) << "no seed has " << OpName(kind);
}

}  // namespace
}  // namespace tessera::graph
