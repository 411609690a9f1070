// The seed corpus of fuzz_plan_file (fuzz/corpus/, docs/fuzzing.md) stays readable, and its
// plans name layers of the model fuzz_plan_file plans them for (the zoo's nmt at batch 8),
// so that fuzzing reaches the planner instead of stopping at "no such layer".
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tessera/base/file_io.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/partitioner/planner.h"

namespace tessera::partitioner {
namespace {

namespace fs = std::filesystem;

TEST(PlanFileFuzzCorpus, EverySeedReadsAndPlansTheNmtModel) {
  auto model = graph::zoo::BuildZooModel("nmt", 8);
  ASSERT_TRUE(model.ok()) << model.status();
  auto cluster = costmodel::ClusterPreset("v100-vpc32");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const fs::path dir = fs::path(TESSERA_SOURCE_DIR) / "fuzz" / "corpus" / "fuzz_plan_file";
  int seeds = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    auto text = base::ReadFileText(entry.path().string(), "seed", 1 << 24);
    ASSERT_TRUE(text.ok()) << text.status();
    auto file = ParsePlanStrategies(*text, entry.path().filename().string());
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_FALSE(file->strategies.empty());
    PlanOptions options{.devices = file->devices, .planner = PlannerKind::kGiven,
                        .bucket_bytes = file->bucket_bytes,
                        .first_bucket_bytes = file->first_bucket_bytes,
                        .strategies = file->strategies,
                        .output_layouts = file->output_layouts};
    const costmodel::RooflineCostModel cost(cluster->WithDevices(options.devices));
    auto plan = PlanModel(*model, *cluster, cost, options);
    ASSERT_TRUE(plan.ok()) << plan.status()
                           << " (regenerate: build-fuzz/bin/fuzz_make_corpus fuzz/corpus)";
    for (const LayerPlan& l : plan->layers) {
      auto given = file->strategies.find(l.name);
      if (given != file->strategies.end()) EXPECT_EQ(l.strategy, given->second) << l.name;
    }
    ++seeds;
  }
  EXPECT_GE(seeds, 4);
}

}  // namespace
}  // namespace tessera::partitioner
