#include "tessera/partitioner/recommend.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace tessera::partitioner {
namespace {

costmodel::ClusterSpec Cluster(const char* name, double price) {
  costmodel::ClusterSpec c;
  c.name = name;
  c.devices_per_node = 8;
  c.nodes = 1;
  c.device.memory_bytes = int64_t{16} << 30;
  c.price_per_device_hour = price;
  return c;
}

// A fake planner: step time 0.1 s + 1 ms per device; nothing fits below 4
// devices (ResourceExhausted, as PlanModel says); on "slow" 4 devices plan but do
// not fit.
absl::StatusOr<Plan> FakePlan(const costmodel::ClusterSpec& c, int devices, int64_t batch) {
  EXPECT_EQ(c.devices(), devices);
  EXPECT_EQ(batch, 10 * devices);
  if (devices < 4) return absl::ResourceExhaustedError("needs at least 4 devices");
  Plan p;
  p.predicted.step_time_s = 0.1 + 0.001 * devices;
  p.memory.fits = !(c.name == "slow" && devices == 4);
  p.memory.device_capacity_bytes = c.device.memory_bytes;
  p.memory.peak_bytes = {p.memory.fits ? int64_t{8} << 30 : int64_t{20} << 30};
  return p;
}

// samples x epochs = 3.6e6: hours(n) = (10 + 0.1 n) / n.
double Hours(int n) { return (10 + 0.1 * n) / n; }

RecommendOptions Options() {
  return {.samples = 1'800'000, .epochs = 2, .batch_per_device = 10, .max_devices = 1024};
}

TEST(RecommendDeviceCountsTest, PowersOfTwoAndWholeNodes) {
  EXPECT_EQ(RecommendDeviceCounts(8, 1024),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(RecommendDeviceCounts(6, 64),
            (std::vector<int>{1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64}));
  EXPECT_EQ(RecommendDeviceCounts(1, 5), (std::vector<int>{1, 2, 4}));
}

TEST(RecommendTest, PredictsTimeAndCostOfEveryOption) {
  auto r = Recommend({Cluster("fast", 2.0), Cluster("slow", 4.0)}, Options(), FakePlan);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->options.size(), 22u);
  const RecommendOption& one = r->options[0];
  EXPECT_EQ(one.devices, 1);
  EXPECT_FALSE(one.planned);
  EXPECT_NE(one.note.find("needs at least 4 devices"), std::string::npos);
  const RecommendOption& sixteen = r->options[4];
  EXPECT_EQ(sixteen.cluster, "fast");
  EXPECT_EQ(sixteen.devices, 16);
  EXPECT_EQ(sixteen.nodes, 2);
  EXPECT_EQ(sixteen.global_batch, 160);
  EXPECT_TRUE(sixteen.fits);
  EXPECT_NEAR(sixteen.step_time_s, 0.116, 1e-12);
  EXPECT_NEAR(sixteen.samples_per_s, 160 / 0.116, 1e-6);
  EXPECT_NEAR(sixteen.hours, Hours(16), 1e-9);
  EXPECT_NEAR(sixteen.cost_usd, Hours(16) * 16 * 2.0, 1e-9);
  const RecommendOption& slow4 = r->options[11 + 2];
  EXPECT_EQ(slow4.cluster, "slow");
  EXPECT_TRUE(slow4.planned);
  EXPECT_FALSE(slow4.fits);
  EXPECT_EQ(slow4.note, "does not fit: needs 20.0 GiB per device, has 16 GiB");
}

TEST(RecommendTest, WithoutLimitsPicksTheCheapestThatFits) {
  auto r = Recommend({Cluster("fast", 2.0), Cluster("slow", 4.0)}, Options(), FakePlan);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->choice, 0);
  EXPECT_EQ(r->options[r->choice].cluster, "fast");
  EXPECT_EQ(r->options[r->choice].devices, 4);  // cost grows with n; 1 and 2 do not fit
}

TEST(RecommendTest, DeadlinePicksTheCheapestInTime) {
  RecommendOptions o = Options();
  o.max_hours = 1.0;  // hours: 4 -> 2.6, 8 -> 1.35, 16 -> 0.725
  auto r = Recommend({Cluster("fast", 2.0), Cluster("slow", 4.0)}, o, FakePlan);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->choice, 0);
  EXPECT_EQ(r->options[r->choice].devices, 16);
  EXPECT_EQ(r->options[r->choice].cluster, "fast");
  EXPECT_NE(r->rule.find("cheapest finishing within 1 h"), std::string::npos) << r->rule;
}

TEST(RecommendTest, BudgetPicksTheFastestWithin) {
  RecommendOptions o = Options();
  o.max_cost = 25;  // cost on fast: 4 -> 20.8, 8 -> 21.6, 16 -> 23.2, 32 -> 26.4
  auto r = Recommend({Cluster("fast", 2.0), Cluster("slow", 4.0)}, o, FakePlan);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->choice, 0);
  EXPECT_EQ(r->options[r->choice].devices, 16);
  EXPECT_NEAR(r->options[r->choice].cost_usd, 23.2, 1e-9);
}

TEST(RecommendTest, DeadlineAndBudgetTogether) {
  RecommendOptions o = Options();
  o.max_hours = 0.5;  // 32 (0.4125 h, $26.4) is the first in time
  o.max_cost = 26;
  auto r = Recommend({Cluster("fast", 2.0)}, o, FakePlan);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->choice, -1);
  o.max_cost = 27;
  r = Recommend({Cluster("fast", 2.0)}, o, FakePlan);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->choice, 0);
  EXPECT_EQ(r->options[r->choice].devices, 32);
}

TEST(RecommendTest, ImpossibleDeadlineNamesTheFastest) {
  RecommendOptions o = Options();
  o.max_hours = 0.05;  // the fastest, 1024 devices, takes 0.1098 h
  auto r = Recommend({Cluster("fast", 2.0)}, o, FakePlan);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->choice, -1);
  EXPECT_NE(r->explanation.find("no option meets the limits"), std::string::npos);
  EXPECT_NE(r->explanation.find("fastest that fits is 1024 x fast"), std::string::npos)
      << r->explanation;
}

TEST(RecommendTest, NothingFits) {
  auto none = [](const costmodel::ClusterSpec&, int, int64_t) -> absl::StatusOr<Plan> {
    return absl::ResourceExhaustedError("too big");
  };
  auto r = Recommend({Cluster("fast", 2.0)}, Options(), none);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->choice, -1);
  EXPECT_NE(r->explanation.find("no option fits"), std::string::npos);
}

TEST(RecommendTest, RejectsBadOptions) {
  RecommendOptions o = Options();
  o.samples = 0;
  EXPECT_NE(Recommend({Cluster("fast", 2)}, o, FakePlan).status().message().find("samples"),
            std::string::npos);
  o = Options();
  o.epochs = 0;
  EXPECT_NE(Recommend({Cluster("fast", 2)}, o, FakePlan).status().message().find("epochs"),
            std::string::npos);
  EXPECT_FALSE(Recommend({}, Options(), FakePlan).ok());
}

TEST(RecommendOutputTest, TableMarksTheChoiceAndJsonHasIt) {
  RecommendOptions o = Options();
  o.max_hours = 1.0;
  auto r = Recommend({Cluster("fast", 2.0), Cluster("slow", 4.0)}, o, FakePlan);
  ASSERT_TRUE(r.ok());
  const std::string table = RecommendTable(*r);
  int starred = 0;
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    if (absl::StartsWith(line, "*")) {
      ++starred;
      EXPECT_TRUE(absl::StrContains(line, "fast")) << line;
      EXPECT_TRUE(absl::StrContains(line, " 16 ")) << line;
      EXPECT_TRUE(absl::StrContains(line, "$23.20")) << line;
    }
  }
  EXPECT_EQ(starred, 1) << table;
  EXPECT_TRUE(absl::StrContains(table, "choice (cheapest finishing within 1 h): 16 x fast"))
      << table;
  const nlohmann::json j = RecommendJson(*r);
  EXPECT_EQ(j["options"].size(), 22u);
  EXPECT_EQ(j["choice"]["devices"], 16);
  EXPECT_EQ(j["choice"]["cluster"], "fast");
  EXPECT_NEAR(j["choice"]["hours"].get<double>(), Hours(16), 1e-9);
  EXPECT_EQ(j["options"][0]["planned"], false);
  EXPECT_TRUE(j["max_cost"].is_null());
}

// Notes go below the table, one per run of rows of a cluster that share it, so the table fits in
// 100 columns and no note speaks for a row it does not belong to.
TEST(RecommendOutputTest, NotesGoBelowTheTableOnePerRunOfRows) {
  auto r = Recommend({Cluster("fast", 2.0), Cluster("slow", 4.0)}, Options(), FakePlan);
  ASSERT_TRUE(r.ok());
  const std::string table = RecommendTable(*r);
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    EXPECT_LE(line.size(), 100u) << line;
  }
  const size_t notes = table.find("\nnotes:\n");
  ASSERT_NE(notes, std::string::npos) << table;
  EXPECT_TRUE(absl::StrContains(table.substr(notes),
                                "  [1] fast, 1 to 2 devices: needs at least 4 devices\n"
                                "  [2] slow, 1 to 2 devices: needs at least 4 devices\n"
                                "  [3] slow, 4 devices: does not fit: needs 20.0 GiB per device, "
                                "has 16 GiB\n"))
      << table;
  EXPECT_FALSE(absl::StrContains(table, "[4]")) << table;
  int marked = 0;
  for (absl::string_view line : absl::StrSplit(table.substr(0, notes), '\n')) {
    if (absl::StrContains(line, "[3]")) {
      ++marked;
      EXPECT_TRUE(absl::StrContains(line, "slow")) << line;
      EXPECT_TRUE(absl::StrContains(line, " no ")) << line;  // planned, does not fit
      EXPECT_FALSE(absl::StrContains(line, "$")) << line;    // and is no option: no cost
    }
    if (absl::StrContains(line, "[1]")) ++marked;
  }
  EXPECT_EQ(marked, 3) << table;  // fast 1 and 2, slow 4
}

TEST(RecommendOutputTest, LongNotesWrapAndRepeatedNotesAfterAGapStartAnew) {
  // Only 2 devices fail, with a long message: 1 plans, 2 does not, 4 and up plan.
  auto gap = [](const costmodel::ClusterSpec&, int devices, int64_t) -> absl::StatusOr<Plan> {
    if (devices == 2 || devices == 8) {
      return absl::InvalidArgumentError(
          "a long planner message that goes on and on about why this device count cannot be "
          "planned, well past the hundredth column of any terminal");
    }
    Plan p;
    p.predicted.step_time_s = 0.1;
    p.memory.fits = true;
    return p;
  };
  RecommendOptions o = Options();
  o.max_devices = 16;
  auto r = Recommend({Cluster("fast", 2.0)}, o, gap);
  ASSERT_TRUE(r.ok());
  const std::string table = RecommendTable(*r);
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    EXPECT_LE(line.size(), 100u) << line;
  }
  EXPECT_TRUE(absl::StrContains(table, "  [1] fast, 2 devices: a long planner message")) << table;
  EXPECT_TRUE(absl::StrContains(table, "  [2] fast, 8 devices: a long planner message")) << table;
  EXPECT_TRUE(absl::StrContains(table, "\n      ")) << table;  // the wrapped lines' indent
}

}  // namespace
}  // namespace tessera::partitioner
