#ifdef TESSERA_HAVE_PLAN_COMMANDS
#include "tessera/tools/recommend_command.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_split.h"

#include "command_runner.h"

namespace tessera::tools {
namespace {

CommandResult Recommend(const std::vector<std::string>& args) { return RunCommand(RunRecommend, args); }

TEST(RecommendCommandTest, JsonListsEveryCountAndTheChoice) {
  CommandResult r = Recommend({"zoo:alexnet", "--samples", "1281167", "--epochs", "2",
                               "--cluster", "v100-vpc32", "--max-devices", "16",
                               "--batch-per-device", "32", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["options"].size(), 5u);  // 1, 2, 4, 8, 16
  int expected_devices = 1;
  for (const auto& o : j["options"]) {
    EXPECT_EQ(o["cluster"], "v100-vpc32");
    EXPECT_EQ(o["devices"], expected_devices);
    EXPECT_EQ(o["global_batch"], 32 * expected_devices);
    ASSERT_TRUE(o["planned"].get<bool>()) << o["note"];
    const double step = o["step_time_s"].get<double>();
    EXPECT_GT(step, 0);
    const double hours = 1281167.0 * 2 / (32 * expected_devices / step) / 3600;
    EXPECT_NEAR(o["hours"].get<double>(), hours, 1e-9 * hours);
    EXPECT_NEAR(o["cost_usd"].get<double>(),
                hours * expected_devices * o["price_per_device_hour"].get<double>(), 1e-6);
    expected_devices *= 2;
  }
  // Without limits: the cheapest option that fits.
  ASSERT_TRUE(j["choice"].is_object());
  double cheapest = 1e300;
  for (const auto& o : j["options"]) {
    if (o["fits"].get<bool>()) cheapest = std::min(cheapest, o["cost_usd"].get<double>());
  }
  EXPECT_DOUBLE_EQ(j["choice"]["cost_usd"].get<double>(), cheapest);
}

TEST(RecommendCommandTest, ImpossibleDeadlineHasNoChoice) {
  CommandResult r = Recommend({"zoo:alexnet", "--samples", "1000000", "--cluster", "h100-dgx",
                               "--max-devices", "8", "--max-hours", "0.000001"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no option meets the limits"), std::string::npos) << r.out;
}

TEST(RecommendCommandTest, EveryPresetUpTo1024IsFast) {
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = Recommend({"zoo:resnet50", "--samples", "1281167", "--epochs", "90",
                               "--max-hours", "24", "--batch-per-device", "32"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"m40-pcie", "v100-vpc32", "v100-ib100", "h100-dgx", "1024", "choice"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
  EXPECT_LT(seconds, 30.0);
}

// The README's example: ResNet-50 at its own batch of 256 per device fits only on the H100s. The
// table fits in 100 columns; each cluster's rows that do not fit share one note below it, which
// says by how much and offers no device count (with the batch per device fixed, more devices do
// not help).
TEST(RecommendCommandTest, ReadmeExampleFitsOneHundredColumnsWithNotesBelow) {
  CommandResult r = Recommend({"zoo:resnet50", "--samples", "1281167", "--epochs", "90",
                               "--max-hours", "24"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    EXPECT_LE(line.size(), 100u) << line;
  }
  for (const char* want : {"\nnotes:\n", "[1] m40-pcie, 1 to 1024 devices: does not fit: needs ",
                           "per device, has 12 GiB", "[2] v100-vpc32, 1 to 1024 devices",
                           "choice (cheapest finishing within 24 h): 1 x h100-dgx"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("smallest device count"), std::string::npos) << r.out;
  CommandResult j = Recommend({"zoo:resnet50", "--samples", "1281167", "--epochs", "90",
                               "--max-hours", "24", "--cluster", "m40-pcie", "--max-devices", "4",
                               "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);  // outlives the loop over its options
  for (const auto& o : doc["options"]) {
    EXPECT_TRUE(o["planned"].get<bool>());
    EXPECT_FALSE(o["fits"].get<bool>());
    EXPECT_EQ(o["note"].get<std::string>().rfind("does not fit: needs ", 0), 0u) << o["note"];
  }
}

TEST(RecommendCommandTest, Errors) {
  CommandResult r = Recommend({"zoo:alexnet"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--samples N is required"), std::string::npos) << r.err;
  r = Recommend({"zoo:alexnet", "--samples", "10", "--epochs", "many"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--epochs takes a number above 0, got 'many'"), std::string::npos) << r.err;
  r = Recommend({"zoo:alexnet", "--samples", "10", "--max-cost", "-5"});
  EXPECT_EQ(r.code, 2);
  r = Recommend({"zoo:alexnet", "--samples", "10", "--cluster", "tpu-v9"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("tpu-v9"), std::string::npos) << r.err;
  r = Recommend({"zoo:nosuchnet", "--samples", "10"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("nosuchnet"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_PLAN_COMMANDS
