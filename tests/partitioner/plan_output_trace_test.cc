#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tessera/partitioner/plan_output.h"
#include "tessera/tests/partitioner/plan_output_sample.h"

namespace tessera::partitioner {
namespace {

TEST(PlanTraceTest, CompleteEventsInMicroseconds) {
  const Plan plan = testing_sample::SamplePlan();
  const nlohmann::json t = PlanTrace(plan);
  EXPECT_EQ(t["displayTimeUnit"], "ms");
  std::vector<nlohmann::json> spans;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X") spans.push_back(e);
  }
  ASSERT_EQ(spans.size(), plan.timeline.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const TimelineEvent& src = plan.timeline[i];
    EXPECT_EQ(spans[i]["name"], src.name);
    EXPECT_EQ(spans[i]["pid"], src.device);
    EXPECT_NEAR(spans[i]["ts"].get<double>(), src.start_s * 1e6, 1e-6);
    EXPECT_NEAR(spans[i]["dur"].get<double>(), src.duration_s * 1e6, 1e-6);
    EXPECT_TRUE(spans[i]["tid"].is_number_integer());
    EXPECT_TRUE(spans[i]["args"].is_object());
  }
  // The same lane has the same tid everywhere; different lanes differ.
  EXPECT_EQ(spans[0]["tid"], spans[1]["tid"]);
  EXPECT_EQ(spans[0]["tid"], spans[3]["tid"]);
  EXPECT_NE(spans[0]["tid"], spans[2]["tid"]);
}

TEST(PlanTraceTest, NamesEveryLaneAndDevice) {
  const Plan plan = testing_sample::SamplePlan();
  const nlohmann::json t = PlanTrace(plan);
  std::map<std::pair<int, int>, std::string> thread_names;
  std::set<int> processes;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "thread_name") {
      thread_names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    } else if (e["name"] == "process_name") {
      processes.insert(e["pid"].get<int>());
      EXPECT_EQ(e["args"]["name"], "device " + std::to_string(e["pid"].get<int>()));
    }
  }
  EXPECT_EQ(processes, (std::set<int>{0, 1}));
  // device 0 has compute and comm lanes, device 1 compute only.
  ASSERT_EQ(thread_names.size(), 3u);
  int compute_tid = -1;
  for (const auto& [key, name] : thread_names) {
    if (name == "compute") compute_tid = key.second;
  }
  EXPECT_EQ(thread_names.at({1, compute_tid}), "compute");
}

TEST(PlanTraceTest, EmptyTimelineGivesAnEmptyTrace) {
  Plan plan;
  const nlohmann::json t = PlanTrace(plan);
  EXPECT_TRUE(t["traceEvents"].is_array());
  EXPECT_TRUE(t["traceEvents"].empty());
}

}  // namespace
}  // namespace tessera::partitioner
