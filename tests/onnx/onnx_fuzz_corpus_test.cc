// The seed corpus of fuzz_onnx_import (fuzz/corpus/, docs/fuzzing.md) stays importable, so
// that fuzzing starts from models that reach past the parser into folding and translation.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tessera/base/file_io.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<Graph> Import(const fs::path& path) {
  OnnxImportOptions options;
  options.symbolic_dims["seq"] = 8;  // as fuzz_onnx_import does
  absl::StatusOr<std::string> bytes = base::ReadFileText(path.string(), "seed", 1 << 24);
  if (!bytes.ok()) return bytes.status();
  return ImportOnnxBytes(*bytes, path.filename().string(), options);
}

const fs::path kFuzz = fs::path(TESSERA_SOURCE_DIR) / "fuzz";

TEST(OnnxFuzzCorpus, EverySeedImportsExceptTheUnsupportedOne) {
  const std::vector<fs::path> seeds = FilesIn(kFuzz / "corpus" / "fuzz_onnx_import");
  ASSERT_GE(seeds.size(), 10u);
  int small = 0;
  for (const fs::path& seed : seeds) {
    SCOPED_TRACE(seed.string());
    auto g = Import(seed);
    if (seed.filename() == "unsupported.onnx") {
      ASSERT_FALSE(g.ok());
      EXPECT_TRUE(absl::StrContains(g.status().message(), "unsupported op")) << g.status();
      continue;
    }
    ASSERT_TRUE(g.ok()) << g.status() << " (regenerate: build-fuzz/bin/fuzz_make_corpus fuzz/corpus)";
    EXPECT_GT(g->num_nodes(), 0);
    small += absl::StartsWith(seed.filename().string(), "small_");
  }
  EXPECT_GE(small, 7);  // fuzz/onnx_seeds.cc's models
}

}  // namespace
}  // namespace tessera::graph
