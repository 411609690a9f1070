#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/tests/partitioner/plan_output_sample.h"

namespace tessera::partitioner {
namespace {

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(PlanHtmlTest, SelfContainedWithoutScriptsOrNetwork) {
  const std::string html = PlanHtml(testing_sample::SamplePlan());
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(html, "</html>"));
  EXPECT_FALSE(absl::StrContains(html, "<script"));
  EXPECT_FALSE(absl::StrContains(html, "<link"));
  EXPECT_FALSE(absl::StrContains(html, "src="));
  EXPECT_FALSE(absl::StrContains(html, "http://"));
  EXPECT_FALSE(absl::StrContains(html, "https://"));
  EXPECT_EQ(Count(html, "<svg"), 3u);  // step time, strategy strip, memory
  EXPECT_EQ(Count(html, "<svg"), Count(html, "</svg>"));
}

TEST(PlanHtmlTest, EscapesEveryTextFromThePlan) {
  const std::string html = PlanHtml(testing_sample::SamplePlan());
  EXPECT_FALSE(absl::StrContains(html, "fc<script>"));
  EXPECT_FALSE(absl::StrContains(html, "tiny<net>"));
  EXPECT_TRUE(absl::StrContains(html, "fc&lt;script&gt;&amp;"));
  EXPECT_TRUE(absl::StrContains(html, "Tessera plan: tiny&lt;net&gt; on v100-vpc32, 4 devices"));
}

TEST(PlanHtmlTest, ShowsStrategiesMemoryAndTimes) {
  const Plan plan = testing_sample::SamplePlan();
  const std::string html = PlanHtml(plan);
  // One strip cell per layer, each titled with its strategy.
  EXPECT_EQ(Count(html, ": data_parallel, "), 1u);
  EXPECT_EQ(Count(html, ": model_parallel, "), 1u);
  EXPECT_EQ(Count(html, ": late_multiply, "), 1u);
  EXPECT_EQ(Count(html, ": replicated, "), 1u);
  // One memory bar per device; the device over capacity is red.
  for (int d = 0; d < 4; ++d) EXPECT_TRUE(absl::StrContains(html, absl::StrCat("device ", d, ": ")));
  EXPECT_EQ(Count(html, "fill=\"#e15759\"><title>device"), 1u);
  EXPECT_TRUE(absl::StrContains(html, "capacity 16.0 GiB"));
  EXPECT_TRUE(absl::StrContains(html, "does not fit"));
  // Step time, exposed and hidden comm, baselines and speed-ups.
  EXPECT_TRUE(absl::StrContains(html, "8.00 ms"));
  EXPECT_TRUE(absl::StrContains(html, "exposed communication 900 us"));
  EXPECT_TRUE(absl::StrContains(html, "hidden behind backward 800 us"));
  EXPECT_TRUE(absl::StrContains(html, "1.50x"));
  EXPECT_TRUE(absl::StrContains(html, "2.50x"));
  EXPECT_TRUE(absl::StrContains(html, "because conv1"));
}

TEST(PlanHtmlTest, EmptyPlanDoesNotCrash) {
  const std::string html = PlanHtml(Plan{});
  EXPECT_TRUE(absl::StrContains(html, "(no layers)"));
  EXPECT_TRUE(absl::StrContains(html, "</html>"));
}

}  // namespace
}  // namespace tessera::partitioner
