// The seed corpus of fuzz_cluster_spec (fuzz/corpus/, docs/fuzzing.md) stays loadable and
// covers a partial last node and measured efficiencies.
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tessera/base/file_io.h"
#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

namespace fs = std::filesystem;

TEST(ClusterFuzzCorpus, EverySeedLoadsAndThePresetsAreThere) {
  const fs::path dir = fs::path(TESSERA_SOURCE_DIR) / "fuzz" / "corpus" / "fuzz_cluster_spec";
  int partial = 0, measured = 0, presets = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    auto text = base::ReadFileText(entry.path().string(), "seed", 1 << 24);
    ASSERT_TRUE(text.ok()) << text.status();
    auto c = ClusterFromJson(*text, entry.path().filename().string());
    ASSERT_TRUE(c.ok()) << c.status() << " (regenerate: build-fuzz/bin/fuzz_make_corpus fuzz/corpus)";
    partial += c->partial_devices > 0;
    measured += c->efficiency.has_value();
    auto preset = ClusterPreset(entry.path().stem().string());
    if (preset.ok()) {
      EXPECT_EQ(*c, *preset);
      ++presets;
    }
  }
  EXPECT_EQ(presets, static_cast<int>(ClusterPresetNames().size()));
  EXPECT_GE(partial, 1);
  EXPECT_GE(measured, 1);
}

}  // namespace
}  // namespace tessera::costmodel
