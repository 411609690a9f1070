// Plan files read back (partitioner/plan_file.h): what `tessera train --strategy PLAN.json`
// accepts, and the errors for what it refuses (each names the file and what is wrong).
#include "tessera/partitioner/plan_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

// Each refusal: InvalidArgument starting with the file's name, saying what is wrong.
TEST(PlanFileTest, RefusalsNameTheFileAndTheFault) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "not a JSON object"},
      {"[1, 2]", "not a JSON object"},
      {R"({"layers": [)", "not a JSON object"},
      {R"({"model": {"name": "nmt"}})", "no \"layers\" array"},
      {R"({"layers": {"name": "fc"}})", "no \"layers\" array"},
      {R"({"layers": [{"name": "fc"}]})", "layers[0] needs string fields"},
      {R"({"layers": [{"name": 3, "strategy": "data_parallel"}]})", "layers[0] needs string"},
      {R"({"layers": [{"name": "fc", "strategy": "fastest"}]})", "layer 'fc': "},
      {R"({"layers": [{"name": "fc", "strategy": "data_parallel"},
                      {"name": "fc", "strategy": "model_parallel"}]})",
       "layer 'fc' appears twice"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto f = ParsePlanStrategies(c.text, "dir/plan.json");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(f.status().message(), HasSubstr("dir/plan.json: not a Tessera plan file ("));
    EXPECT_THAT(f.status().message(), HasSubstr(c.says));
    EXPECT_THAT(f.status().message(), HasSubstr("tessera plan"));  // says how to make one
  }
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
