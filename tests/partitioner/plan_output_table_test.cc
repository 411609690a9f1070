#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/plan_output_impl.h"
#include "tessera/tests/partitioner/plan_output_sample.h"

namespace tessera::partitioner {
namespace {

std::string LineWith(const std::string& text, const std::string& needle) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find(needle) != absl::string_view::npos) return std::string(line);
  }
  return "";
}

TEST(PlanTableTest, OneRowPerLayerWithStrategyAndReason) {
  const std::string t = PlanTable(testing_sample::SamplePlan());
  EXPECT_NE(t.find("plan for tiny<net> on v100-vpc32: 4 devices (1 node), global batch 64"),
            std::string::npos)
      << t;
  const std::string conv = LineWith(t, "conv1");
  EXPECT_NE(conv.find("Conv"), std::string::npos);
  EXPECT_NE(conv.find("data_parallel"), std::string::npos);
  EXPECT_NE(conv.find("because conv1"), std::string::npos);
  EXPECT_NE(conv.find("4.00 ms"), std::string::npos) << conv;   // compute
  EXPECT_NE(conv.find("1.00 ms"), std::string::npos) << conv;   // comm
  EXPECT_NE(conv.find("1.00 MiB"), std::string::npos) << conv;  // bytes moved
  EXPECT_NE(LineWith(t, "fc2").find("late_multiply"), std::string::npos);
  EXPECT_NE(LineWith(t, "fc<script>&").find("model_parallel"), std::string::npos);
  EXPECT_NE(LineWith(t, "because softmax").find("replicated"), std::string::npos);
}

TEST(PlanTableTest, PredictionMemoryAndBaselines) {
  const std::string t = PlanTable(testing_sample::SamplePlan());
  EXPECT_NE(LineWith(t, "predicted step").find("8.00 ms"), std::string::npos) << t;
  EXPECT_NE(LineWith(t, "predicted step").find("8,000 samples/s"), std::string::npos) << t;
  EXPECT_NE(LineWith(t, "exposed").find("900 us"), std::string::npos) << t;
  EXPECT_NE(t.find("DOES NOT FIT"), std::string::npos);
  EXPECT_NE(LineWith(t, "peak").find("3: 20.0 GiB"), std::string::npos) << t;
  EXPECT_NE(LineWith(t, "largest peak").find("125%"), std::string::npos) << t;
  EXPECT_NE(LineWith(t, "buckets").find("3 gradient buckets per step, the first up to 512 KiB, "
                                        "the others up to 4.00 MiB (the simulator's fastest)"),
            std::string::npos)
      << t;
  // 12 ms / 8 ms and 20 ms / 8 ms.
  EXPECT_NE(LineWith(t, "all data_parallel").find("1.50x"), std::string::npos) << t;
  EXPECT_NE(LineWith(t, "all model_parallel").find("2.50x"), std::string::npos) << t;
}

TEST(PlanTableTest, ManyDevicesSummarizePeakRange) {
  Plan plan = testing_sample::SamplePlan();
  plan.devices = 64;
  plan.memory.peak_bytes.assign(64, int64_t{1} << 30);
  plan.memory.peak_bytes[17] = int64_t{2} << 30;
  const std::string t = PlanTable(plan);
  EXPECT_NE(LineWith(t, "peak  ").find("1.00 GiB to 2.00 GiB over 64 devices (largest: device 17)"),
            std::string::npos)
      << t;
}

TEST(PlanOutputFormatTest, HtmlEscape) {
  EXPECT_EQ(internal::HtmlEscape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

}  // namespace
}  // namespace tessera::partitioner
