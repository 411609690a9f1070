// The seed corpus of fuzz_graph_json (fuzz/corpus/, docs/fuzzing.md) stays loadable: a
// graph file for every op of the catalogue, zoo models and imported test models.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tessera/base/file_io.h"
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
    auto text = base::ReadFileText(entry.path().string(), "seed", 1 << 24);
    ASSERT_TRUE(text.ok()) << text.status();
    auto g = GraphFromJson(*text, entry.path().filename().string());
    ASSERT_TRUE(g.ok()) << g.status() << " (regenerate: build-fuzz/bin/fuzz_make_corpus fuzz/corpus)";
    for (const Node& n : g->nodes()) ops.insert(n.kind);
    ++seeds;
  }
  EXPECT_GE(seeds, 50);
  for (OpKind kind : AllOpKinds()) EXPECT_TRUE(ops.count(kind)) << "no seed has " << OpName(kind);
}

}  // namespace
}  // namespace tessera::graph
