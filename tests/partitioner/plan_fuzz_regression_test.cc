// Graph files that once broke fuzz_graph_json past the loader, in the planner
// (fuzz/regressions/fuzz_graph_json/, docs/fuzzing.md): planning them gives a clean error.
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/graph_json.h"
#include "tessera/partitioner/planner.h"

namespace tessera::partitioner {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressions =
    fs::path(TESSERA_SOURCE_DIR) / "fuzz" / "regressions" / "fuzz_graph_json";

absl::StatusOr<Plan> PlanOnTwoDevices(const graph::Graph& g) {
  auto cluster = costmodel::ClusterPreset("v100-vpc32");
  if (!cluster.ok()) return cluster.status();
  const costmodel::RooflineCostModel cost(cluster->WithDevices(2));
  return PlanModel(g, *cluster, cost, {.devices = 2});
}

// An input of 2 x 1 x 1e18 floats (8e18 bytes, which fits in int64) read by a Relu: the
// layer's bytes read plus bytes written overflowed int64 in the planner's compute time
// (undefined behaviour, caught by UBSan). The planner now refuses the graph by the size
// of its values.
TEST(PlanFuzzRegression, HugeTensorBytesDoNotOverflowTheLayerCompute) {
  auto g = graph::ReadGraphFile((kRegressions / "planner_bytes_sum_overflows.json").string());
  ASSERT_TRUE(g.ok()) << g.status();
  auto plan = PlanOnTwoDevices(*g);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(),
                                "value 'x' needs 7105 PiB (8000000000000000000 bytes)"))
      << plan.status();
}

// Every kept input loads cleanly or not at all, and a loaded one plans or fails cleanly.
TEST(PlanFuzzRegression, EveryKeptInputLoadsAndPlansOrFailsCleanly) {
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(kRegressions)) {
    SCOPED_TRACE(entry.path().string());
    auto g = graph::ReadGraphFile(entry.path().string());
    if (g.ok()) {
      auto plan = PlanOnTwoDevices(*g);
      if (plan.ok()) EXPECT_EQ(plan->devices, 2);
    } else {
      EXPECT_TRUE(absl::StartsWith(g.status().message(), entry.path().string() + ": "))
          << g.status();
    }
    ++inputs;
  }
  EXPECT_GE(inputs, 1);
}

}  // namespace
}  // namespace tessera::partitioner
