// The run record of a checkpoint directory: written as a plan file with a "run" object and
// read back equal; a legacy manifest.json read as a record without optimizer, seed and
// layouts; differences one line each, in a fixed order; a broken record is DataLoss naming it.
#include "tessera/exec/run_record.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/partitioner/plan_file.h"

namespace tessera::exec {
namespace {

namespace fs = std::filesystem;
using costmodel::OptimizerKind;
using partitioner::Layout;
using partitioner::Strategy;

std::string Dir(const std::string& name) {
  const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "test_tmp" / ("run_record_" + name);
  fs::remove_all(dir);
  return dir.string();
}

partitioner::Plan TwoLayers() {
  partitioner::Plan p{.model_name = "mlp", .batch = 8, .cluster_name = "local", .devices = 2,
                      .nodes = 1};
  p.layers.push_back({.name = "fc1", .op = "Gemm", .strategy = Strategy::kDataParallel});
  p.layers.push_back({.name = "fc2", .op = "Gemm", .strategy = Strategy::kModelParallel,
                      .output_layout = Layout::kFeature});
  p.memory.peak_bytes = {0, 0};
  return p;
}

TEST(RunRecordTest, WrittenAsAPlanFileAndReadBack) {
  const std::string dir = Dir("round_trip");
  partitioner::Plan plan = TwoLayers();
  plan.buckets = {.first_bytes = 512 << 10, .bytes = 8 << 20, .tuned = true, .count = 2};
  const RunRecord record = RecordOf(plan, OptimizerKind::kAdam, 7);
  ASSERT_TRUE(WriteRunRecord(dir, plan, record).ok());
  absl::StatusOr<std::optional<RunRecord>> back = ReadRunRecord(dir);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->has_value());
  EXPECT_TRUE(RunDifferences(**back, record).empty());
  EXPECT_EQ((*back)->optimizer, OptimizerKind::kAdam);
  EXPECT_EQ((*back)->seed, 7u);
  EXPECT_EQ((*back)->output_layouts.at("fc2"), Layout::kFeature);
  EXPECT_EQ((*back)->first_bucket_bytes, 512 << 10);
  EXPECT_EQ((*back)->bucket_bytes, 8 << 20);
  // It is a plan file `tessera train --strategy` reads.
  absl::StatusOr<partitioner::PlanFileStrategies> file =
      partitioner::ReadPlanStrategies(dir + "/plan.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->strategies.at("fc2"), Strategy::kModelParallel);
  EXPECT_EQ(file->devices, 2);
  // Nothing saved yet: no record.
  absl::StatusOr<std::optional<RunRecord>> none = ReadRunRecord(Dir("empty"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(RunRecordTest, DifferencesOneLineEachInOrder) {
  const partitioner::Plan plan = TwoLayers();
  RunRecord saved = RecordOf(plan, OptimizerKind::kAdam, 1);
  RunRecord now = RecordOf(plan, OptimizerKind::kSgd, 2);
  now.workers = 4;
  now.strategies["fc2"] = Strategy::kDataParallel;
  now.strategies["fc3"] = Strategy::kDataParallel;
  saved.output_layouts["fc1"] = Layout::kBatch;
  now.bucket_bytes = saved.bucket_bytes * 2;
  const std::vector<std::string> lines = RunDifferences(saved, now);
  const std::vector<std::string> want = {
      "workers: checkpoint 2, this run 4", "optimizer: checkpoint adam, this run sgd",
      "seed: checkpoint 1, this run 2",
      absl::StrCat("bucket-size: checkpoint ", saved.bucket_bytes, ", this run ",
                   now.bucket_bytes),
      "layer fc2: checkpoint model_parallel, this run data_parallel",
      "layer fc3: checkpoint absent, this run data_parallel"};
  EXPECT_EQ(lines, want);
}

TEST(RunRecordTest, LegacyManifestAndBrokenRecords) {
  const std::string dir = Dir("legacy");
  fs::create_directories(dir);
  std::ofstream(dir + "/manifest.json")
      << R"({"model": "mlp", "workers": 2, "batch": 8,
             "layers": {"fc1": "data_parallel", "fc2": "model_parallel"}})";
  absl::StatusOr<std::optional<RunRecord>> legacy = ReadRunRecord(dir);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  ASSERT_TRUE(legacy->has_value());
  EXPECT_FALSE((*legacy)->optimizer.has_value());
  // What the legacy record lacks (optimizer, seed, layouts) is not compared.
  EXPECT_TRUE(
      RunDifferences(**legacy, RecordOf(TwoLayers(), OptimizerKind::kSgd, 3)).empty());
  std::ofstream(dir + "/plan.json") << R"({"layers": [], "run": {"workers": 0}})";
  absl::StatusOr<std::optional<RunRecord>> broken = ReadRunRecord(dir);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(broken.status().message(), dir + "/plan.json: run"))
      << broken.status();
}

}  // namespace
}  // namespace tessera::exec
