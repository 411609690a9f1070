// Plan files read back (partitioner/plan_file.h): what `tessera train --strategy PLAN.json`
// accepts, and the errors for what it refuses (each names the file and what is wrong).
#include "tessera/partitioner/plan_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/planner.h"
#include "tessera/tests/partitioner/fake_cost_model.h"
#include "tessera/tests/partitioner/test_mlp.h"

namespace tessera::partitioner {
namespace {

using ::testing::HasSubstr;

TEST(PlanFileTest, ReadsModelDevicesAndEveryLayersStrategy) {
  auto f = ParsePlanStrategies(R"({"model": {"name": "nmt"}, "cluster": {"devices": 4},
      "layers": [{"name": "classifier", "strategy": "late_multiply"},
                 {"name": "encoder.lstm", "strategy": "data_parallel"}]})",
                               "p.json");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->model, "nmt");
  EXPECT_EQ(f->devices, 4);
  ASSERT_EQ(f->strategies.size(), 2u);
  EXPECT_EQ(f->strategies.at("classifier"), Strategy::kLateMultiply);
  EXPECT_EQ(f->strategies.at("encoder.lstm"), Strategy::kDataParallel);
}

TEST(PlanFileTest, ReadsTheOutputLayoutsLayersRecord) {
  auto f = ParsePlanStrategies(R"({"layers": [
      {"name": "fc", "strategy": "model_parallel", "layouts": {"output": "feature"}},
      {"name": "relu", "strategy": "data_parallel", "layouts": {"inputs": []}},
      {"name": "loss", "strategy": "data_parallel"}]})",
                               "p.json");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->strategies.size(), 3u);
  // Only "fc" records an output; the others (no "layouts", or none in it) take the first
  // option of their strategy.
  EXPECT_EQ(f->output_layouts, (std::map<std::string, Layout>{{"fc", Layout::kFeature}}));
}

// Each refusal: InvalidArgument naming the file, the field's path (layers by index and name)
// and what is wrong with it.
TEST(PlanFileTest, RefusalsNameTheFileTheFieldAndTheFault) {
  const struct {
    std::string text;
    const char* says;  // follows "dir/plan.json: "
  } cases[] = {
      {"", "the file is empty; expected a Tessera plan file (a JSON object)"},
      {"[1, 2]", "expected a Tessera plan file (a JSON object), got an array of 2 values"},
      {R"({"layers": [)", "not valid JSON: parse error at line 1, column 13"},
      {R"({"model": {"name": "nmt"}})", "missing field \"layers\""},
      {R"({"layers": {"name": "fc"}})", "layers: expected an array of layers, got an object"},
      {R"({"layers": [3]})", "layers[0]: expected an object, got 3"},
      {R"({"layers": [{"name": "fc"}]})", "layers[0] (\"fc\"): missing field \"strategy\""},
      {R"({"layers": [{"strategy": "data_parallel"}]})", "layers[0]: missing field \"name\""},
      {R"({"layers": [{"name": 3, "strategy": "data_parallel"}]})",
       "layers[0].name: expected a string, got 3"},
      {R"({"layers": [{"name": "fc", "strategy": "fastest"}]})",
       "layers[0] (\"fc\").strategy: unknown strategy"},
      {R"({"layers": [{"name": "fc", "strategy": "data_parallel"},
                      {"name": "fc", "strategy": "model_parallel"}]})",
       "layers[1] (\"fc\"): the layer \"fc\" appears twice (also layers[0])"},
      {R"({"layers": [{"name": "fc", "strategy": "model_parallel",
                       "layouts": {"output": "diagonal"}}]})",
       "layers[0] (\"fc\").layouts.output: unknown layout 'diagonal'; expected batch, feature or "
       "replicated"},
      {R"({"layers": [{"name": "fc", "strategy": "model_parallel", "layouts": {"output": 1}}]})",
       "layers[0] (\"fc\").layouts.output: expected a layout name, got 1"},
      {R"({"layers": [{"name": "fc", "strategy": "model_parallel", "layouts": "feature"}]})",
       "layers[0] (\"fc\").layouts: expected an object, got \"feature\""},
      {R"({"cluster": {"devices": 4294967300}, "layers": []})",
       "cluster.devices: got 4294967300; allowed: -2147483648 to 2147483647"},
      {std::string(100, '['), "values nest more than 64 levels deep (at byte 64)"},
      {R"({"gradient_buckets": 4, "layers": []})",
       "gradient_buckets: expected an object, got 4"},
      {R"({"gradient_buckets": {"bucket_bytes": 4}, "layers": []})",
       "gradient_buckets: missing field \"first_bucket_bytes\""},
      {R"({"gradient_buckets": {"first_bucket_bytes": 1, "bucket_bytes": 0}, "layers": []})",
       "gradient_buckets.bucket_bytes: got 0; allowed: 1 to 1099511627776"},
      {R"({"gradient_buckets": {"first_bucket_bytes": "1MiB", "bucket_bytes": 4}, "layers": []})",
       "gradient_buckets.first_bucket_bytes: expected an integer, got \"1MiB\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto f = ParsePlanStrategies(c.text, "dir/plan.json");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(f.status().message(), HasSubstr(std::string("dir/plan.json: ") + c.says));
  }
}

// Plan files carry many fields: those the reader does not use, at any level, are allowed, and
// "model" and "cluster" describe the plan without being required (nor checked, as before).
TEST(PlanFileTest, FieldsItDoesNotUseAreAllowed) {
  auto f = ParsePlanStrategies(R"({"model": 7, "cluster": {"devices": "four"}, "extra": [[{}]],
      "layers": [{"name": "fc", "strategy": "data_parallel", "params": 12,
                  "layouts": {"output": "batch", "inputs": [{"tensor": "x"}], "partial_dx": 1}}]})",
                               "p.json");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->model, "");
  EXPECT_EQ(f->devices, 0);
  EXPECT_EQ(f->output_layouts, (std::map<std::string, Layout>{{"fc", Layout::kBatch}}));
}

// A plan written as JSON and read back names the same option of every layer: the runtime's
// plan of the Mlp with fc2 leaving its output on the feature axis (model_parallel, like its
// folded form that leaves it on the batch) plans again with fc2 on the feature axis.
TEST(PlanFileTest, RoundTripKeepsEachLayersOutputLayout) {
  testing::FakeCostModel fake;
  const graph::Graph g = testing::Mlp(16);
  const costmodel::ClusterSpec cluster = testing::MlpCluster(int64_t{1} << 34);
  PlanOptions options{.devices = 4, .planner = PlannerKind::kGiven, .executable = true,
                      .strategies = {{"fc2", Strategy::kModelParallel}},
                      .output_layouts = {{"fc2", Layout::kFeature}}};
  auto first = PlanModel(g, cluster, fake, options);
  ASSERT_TRUE(first.ok()) << first.status();
  auto file = ParsePlanStrategies(PlanToJson(*first).dump(2), "plan.json");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->output_layouts.size(), first->layers.size());
  EXPECT_EQ(file->output_layouts.at("fc2"), Layout::kFeature);
  options.strategies = file->strategies;
  options.output_layouts = file->output_layouts;
  auto again = PlanModel(g, cluster, fake, options);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->layers.size(), first->layers.size());
  for (size_t i = 0; i < first->layers.size(); ++i) {
    const LayerPlan& a = first->layers[i];
    const LayerPlan& b = again->layers[i];
    EXPECT_EQ(b.strategy, a.strategy) << a.name;
    EXPECT_EQ(b.output_layout, a.output_layout) << a.name;
    EXPECT_EQ(b.input_layouts, a.input_layouts) << a.name;
  }
}

// The gradient buckets a plan ran with read back as PlanOptions' sizes: planning again with
// them keeps them (as given, not tuned). A file without them (older ones) leaves the sizes 0,
// for the planner to choose.
TEST(PlanFileTest, RoundTripKeepsTheGradientBuckets) {
  testing::FakeCostModel fake;
  fake.collective_latency_s = 1e-4;
  const graph::Graph g = testing::Mlp(16);
  const costmodel::ClusterSpec cluster = testing::MlpCluster(int64_t{1} << 34);
  PlanOptions options{.devices = 4, .planner = PlannerKind::kData, .bucket_bytes = 3 << 20,
                      .first_bucket_bytes = 300 << 10};
  auto first = PlanModel(g, cluster, fake, options);
  ASSERT_TRUE(first.ok()) << first.status();
  const nlohmann::json json = PlanToJson(*first);
  auto file = ParsePlanStrategies(json.dump(2), "plan.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->first_bucket_bytes, 300 << 10);
  EXPECT_EQ(file->bucket_bytes, 3 << 20);
  options = {.devices = 4, .planner = PlannerKind::kGiven, .strategies = file->strategies,
             .output_layouts = file->output_layouts};
  options.bucket_bytes = file->bucket_bytes;
  options.first_bucket_bytes = file->first_bucket_bytes;
  auto again = PlanModel(g, cluster, fake, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->buckets.first_bytes, 300 << 10);
  EXPECT_EQ(again->buckets.bytes, 3 << 20);
  EXPECT_FALSE(again->buckets.tuned);
  EXPECT_EQ(again->buckets.count, first->buckets.count);

  nlohmann::json older = json;
  older.erase("gradient_buckets");
  auto old_file = ParsePlanStrategies(older.dump(), "old.json");
  ASSERT_TRUE(old_file.ok()) << old_file.status();
  EXPECT_EQ(old_file->first_bucket_bytes, 0);
  EXPECT_EQ(old_file->bucket_bytes, 0);
  EXPECT_EQ(old_file->strategies, file->strategies);
}

TEST(PlanFileTest, MissingFileIsNamed) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "no_such_plan_file.json").string();
  auto f = ReadPlanStrategies(path);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace tessera::partitioner
