// ChromeTrace: metadata naming every process and its tracks, one "X" event per span in
// microseconds, thread ids fixed by the layout's track order and shared by every process.
#include "tessera/base/chrome_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace tessera::base {
namespace {

TEST(ChromeTraceTest, ProcessesTracksAndSpans) {
  const std::vector<TraceSpan> spans = {
      {.name = "b", .track = "gradients", .process = 1, .start_us = 5, .duration_us = 2,
       .args = {{"bytes", 64}}},
      {.name = "a", .track = "compute", .process = 0, .start_us = 0, .duration_us = 4},
      {.name = "c", .track = "extra", .process = 0, .start_us = 1, .duration_us = 1},
      {.name = "d", .track = "compute", .process = 1, .start_us = 0.5, .duration_us = 3}};
  const nlohmann::json t =
      ChromeTrace(spans, {.process_prefix = "worker", .tracks = {"compute", "activations",
                                                                 "gradients"}},
                  {{"model", "m"}});
  EXPECT_EQ(t["displayTimeUnit"], "ms");
  EXPECT_EQ(t["otherData"]["model"], "m");
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::vector<nlohmann::json> x;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] == "M") {
      EXPECT_TRUE(x.empty()) << "metadata comes before the spans";
      const std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
      if (e["name"] == "process_name") processes[key.first] = e["args"]["name"];
      if (e["name"] == "thread_name") threads[key] = e["args"]["name"];
      if (e["name"] == "thread_sort_index") EXPECT_EQ(e["args"]["sort_index"], key.second);
    } else {
      ASSERT_EQ(e["ph"], "X");
      x.push_back(e);
    }
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "worker 0"}, {1, "worker 1"}}));
  // Listed tracks keep their ids (activations is 1 though no span uses it); others follow.
  const std::map<std::pair<int, int>, std::string> want = {
      {{0, 0}, "compute"}, {{0, 3}, "extra"}, {{1, 0}, "compute"}, {{1, 2}, "gradients"}};
  EXPECT_EQ(threads, want);
  ASSERT_EQ(x.size(), spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {  // in the order given
    EXPECT_EQ(x[i]["name"], spans[i].name);
    EXPECT_EQ(x[i]["cat"], spans[i].track);
    EXPECT_EQ(x[i]["pid"], spans[i].process);
    EXPECT_DOUBLE_EQ(x[i]["ts"].get<double>(), spans[i].start_us);
    EXPECT_DOUBLE_EQ(x[i]["dur"].get<double>(), spans[i].duration_us);
    EXPECT_EQ(x[i]["args"], spans[i].args);
  }
  EXPECT_EQ(x[0]["tid"], 2);
}

TEST(ChromeTraceTest, NoSpansNoEvents) {
  const nlohmann::json t = ChromeTrace({}, {});
  EXPECT_TRUE(t["traceEvents"].is_array());
  EXPECT_TRUE(t["traceEvents"].empty());
  EXPECT_TRUE(t["otherData"].is_object());
}

}  // namespace
}  // namespace tessera::base
