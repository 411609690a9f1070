#include <gtest/gtest.h>

#include <regex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/text_format.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/tests/partitioner/plan_output_sample.h"

namespace tessera::partitioner {
namespace {

using testing_sample::SampleCluster;
using testing_sample::SamplePlan;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string Html(const Plan& plan) { return PlanHtml(plan, SampleCluster()); }

// A rectangle of the report's SVG with its tooltip.
struct Segment {
  double x = 0, width = 0;
  std::string fill, title;
};

// The rectangles whose title starts with `prefix`, in document order.
std::vector<Segment> Segments(const std::string& html, const std::string& prefix) {
  static const std::regex kRect(
      "<rect x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"[0-9.]+\" "
      "fill=\"(#[0-9a-f]+)\"><title>([^<]*)</title>");
  std::vector<Segment> out;
  for (std::sregex_iterator it(html.begin(), html.end(), kRect), end; it != end; ++it) {
    const std::smatch& m = *it;
    if (!absl::StartsWith(m[4].str(), prefix)) continue;
    out.push_back({std::stod(m[1].str()), std::stod(m[2].str()), m[3].str(), m[4].str()});
  }
  return out;
}

// The title of a stacked segment: "LABEL: COMPONENT 1,234 B (1.21 KiB)".
std::string SegmentTitle(const std::string& label, const std::string& component, int64_t bytes) {
  return absl::StrCat(label, ": ", component, " ", base::WithThousands(bytes), " B (",
                      base::HumanBytes(static_cast<double>(bytes)), ")");
}

TEST(PlanHtmlTest, SelfContainedWithoutScriptsOrNetwork) {
  const std::string html = Html(SamplePlan());
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

TEST(PlanHtmlTest, EscapesEveryTextFromThePlanAndTheCluster) {
  const std::string html = Html(SamplePlan());
  EXPECT_FALSE(absl::StrContains(html, "fc<script>"));
  EXPECT_FALSE(absl::StrContains(html, "tiny<net>"));
  EXPECT_FALSE(absl::StrContains(html, "V100<SXM2>"));
  EXPECT_FALSE(absl::StrContains(html, "<guesses>"));
  EXPECT_TRUE(absl::StrContains(html, "fc&lt;script&gt;&amp;"));
  EXPECT_TRUE(absl::StrContains(html, "Tessera plan: tiny&lt;net&gt; on v100-vpc32, 4 devices"));
  EXPECT_TRUE(absl::StrContains(html, "<td>V100&lt;SXM2&gt;</td>"));
  EXPECT_TRUE(absl::StrContains(html, "<td>data sheets &amp; &lt;guesses&gt;</td>"));
}

TEST(PlanHtmlTest, ShowsStrategiesAndTimes) {
  const std::string html = Html(SamplePlan());
  // One strip cell per layer, each titled with its strategy.
  EXPECT_EQ(Count(html, ": data_parallel, "), 1u);
  EXPECT_EQ(Count(html, ": model_parallel, "), 1u);
  EXPECT_EQ(Count(html, ": late_multiply, "), 1u);
  EXPECT_EQ(Count(html, ": replicated, "), 1u);
  EXPECT_TRUE(absl::StrContains(html, "does not fit"));
  // Step time, exposed and hidden comm, baselines and speed-ups.
  EXPECT_TRUE(absl::StrContains(html, "8.00 ms"));
  EXPECT_TRUE(absl::StrContains(html, "exposed communication 900 us"));
  EXPECT_TRUE(absl::StrContains(html, "hidden behind backward 800 us"));
  EXPECT_TRUE(absl::StrContains(html, "1.50x"));
  EXPECT_TRUE(absl::StrContains(html, "2.50x"));
  EXPECT_TRUE(absl::StrContains(html, "because conv1"));
  EXPECT_TRUE(absl::StrContains(html, "Gradient buckets: 3 per step, the first up to 512 KiB, "
                                      "the others up to 4.00 MiB"));
}

// The sample's devices hold 3, 3, 2 and 20 GiB; its breakdown is device 3's.
TEST(PlanHtmlTest, MemoryChartStacksTheBreakdownOfTheLargestDevice) {
  const Plan plan = SamplePlan();
  const MemoryPrediction& m = plan.memory;
  const std::string html = Html(plan);
  const std::vector<std::pair<std::string, int64_t>> parts = {
      {"parameters", m.params_bytes},   {"gradients", m.grads_bytes},
      {"optimizer state", m.optimizer_bytes}, {"activations", m.activation_bytes},
      {"workspace", m.workspace_bytes}, {"gradient-bucket buffers", m.comm_buffer_bytes}};
  const std::vector<Segment> stack = Segments(html, "device 3: ");
  ASSERT_EQ(stack.size(), parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(stack[i].title, SegmentTitle("device 3", parts[i].first, parts[i].second));
    EXPECT_EQ(Count(html, stack[i].title), 1u) << stack[i].title;
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat(">", parts[i].first, "</text>")))
        << "legend lacks " << parts[i].first;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(stack[i].fill, stack[j].fill) << parts[i].first;
  }
  EXPECT_TRUE(absl::StrContains(html, "activations 21,447,557,504 B (20.0 GiB)"));
  // Devices whose peak differs from the breakdown's total: one grey bar each run.
  EXPECT_EQ(Segments(html, "devices 0-1: peak 3,221,225,472 B (3.00 GiB)").size(), 1u);
  EXPECT_EQ(Segments(html, "device 2: peak 2,147,483,648 B (2.00 GiB)").size(), 1u);
  EXPECT_TRUE(absl::StrContains(html, ">peak, breakdown not recorded</text>"));
  EXPECT_TRUE(absl::StrContains(html, "capacity 16.0 GiB"));
  EXPECT_EQ(Count(html, "20.0 GiB over capacity"), 1u);
  EXPECT_EQ(Count(html, "over capacity"), 1u);
}

// The planner's plans: every device the same peak, the breakdown's total.
Plan UniformPlan(int devices) {
  Plan plan = SamplePlan();
  plan.devices = devices;
  MemoryPrediction& m = plan.memory;
  m.params_bytes = int64_t{1} << 30;
  m.grads_bytes = int64_t{1} << 30;
  m.optimizer_bytes = int64_t{2} << 30;
  m.activation_bytes = int64_t{3} << 30;
  m.workspace_bytes = 0;
  m.comm_buffer_bytes = int64_t{512} << 20;
  m.peak_bytes.assign(devices, m.params_bytes + m.grads_bytes + m.optimizer_bytes +
                                   m.activation_bytes + m.comm_buffer_bytes);
  m.fits = true;
  return plan;
}

TEST(PlanHtmlTest, ManyEqualDevicesShareOneBarWithSegmentsInProportion) {
  const Plan plan = UniformPlan(512);
  const MemoryPrediction& m = plan.memory;
  const std::string html = Html(plan);
  const std::vector<std::pair<std::string, int64_t>> parts = {
      {"parameters", m.params_bytes}, {"gradients", m.grads_bytes},
      {"optimizer state", m.optimizer_bytes}, {"activations", m.activation_bytes},
      {"gradient-bucket buffers", m.comm_buffer_bytes}};  // no workspace: it is 0
  const std::vector<Segment> stack = Segments(html, "devices 0-511: ");
  ASSERT_EQ(stack.size(), parts.size());
  EXPECT_TRUE(Segments(html, "device 0").empty());
  EXPECT_TRUE(absl::StrContains(html, ">devices 0-511</text>"));
  EXPECT_FALSE(absl::StrContains(html, ">workspace</text>"));
  EXPECT_FALSE(absl::StrContains(html, "breakdown not recorded"));
  EXPECT_FALSE(absl::StrContains(html, "over capacity"));
  // Stacked left to right without gaps, each width in proportion to its bytes.
  const double px_per_byte = stack[3].width / static_cast<double>(m.activation_bytes);
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(stack[i].title, SegmentTitle("devices 0-511", parts[i].first, parts[i].second));
    EXPECT_NEAR(stack[i].width, px_per_byte * static_cast<double>(parts[i].second), 0.02)
        << parts[i].first;
    if (i > 0) EXPECT_NEAR(stack[i].x, stack[i - 1].x + stack[i - 1].width, 0.02) << parts[i].first;
  }
}

TEST(PlanHtmlTest, ManyDifferentPeaksKeepTheMemoryChartBounded) {
  Plan plan = UniformPlan(512);
  for (size_t d = 0; d < plan.memory.peak_bytes.size(); ++d) plan.memory.peak_bytes[d] += d;
  const std::string html = Html(plan);
  EXPECT_EQ(Segments(html, "device 511: peak ").size(), 1u);
  EXPECT_FALSE(absl::StrContains(html, ">device 511</text>"));  // bars too thin to label
  std::smatch height;
  const std::regex svg_height("height=\"([0-9]+)\" role=\"img\" aria-label=\"memory");
  ASSERT_TRUE(std::regex_search(html, height, svg_height));
  EXPECT_LE(std::stoi(height[1].str()), 400);
}

TEST(PlanHtmlTest, IntegersCarryThousandsSeparators) {
  Plan plan = UniformPlan(4);
  plan.batch = 2048;
  plan.model_params = 61100840;
  plan.layers[1].params = 12345;
  plan.predicted.samples_per_s = 8000.4;
  const std::string html = Html(plan);
  EXPECT_TRUE(absl::StrContains(html, "global batch 2,048"));
  EXPECT_TRUE(absl::StrContains(html, "61,100,840 parameters"));
  EXPECT_TRUE(absl::StrContains(html, "<b class=\"\">8,000</b><span>samples per second"));
  EXPECT_TRUE(absl::StrContains(html, "<td class=\"n\">12,345</td>"));  // the layer's params
  // The memory table: each part's exact bytes, the peak and the capacity.
  EXPECT_TRUE(absl::StrContains(html, "<td class=\"n\">3,221,225,472</td>"));  // activations
  EXPECT_TRUE(absl::StrContains(html, "<td class=\"n\">8,053,063,680</td>"));  // peak
  EXPECT_TRUE(absl::StrContains(html, "<td class=\"n\">17,179,869,184</td>"));  // capacity
  EXPECT_FALSE(absl::StrContains(html, "3221225472"));
  EXPECT_FALSE(absl::StrContains(html, "17179869184"));
}

TEST(PlanHtmlTest, ShowsTheClusterFigures) {
  const std::string html = Html(SamplePlan());
  for (const char* row : {
           "<th>cluster</th><td>v100-vpc32</td>",
           "<th>devices</th><td>4 on 1 node (8 per node)</td>",
           "<th>peak FLOP/s</th><td>15.7 TFLOP/s f32, 125 TFLOP/s f16</td>",
           "<th>memory per device</th><td>16.0 GiB (17,179,869,184 bytes)</td>",
           "<th>memory bandwidth</th><td>900 GB/s</td>",
           "<th>intra-node link</th><td>150 GB/s, 3.00 us latency per message (per device)</td>",
           "<th>inter-node link</th><td>4.00 GB/s, 40.0 us latency per message (unused: one "
           "node)</td>",
           "<th>price</th><td>$3.06 per device-hour, $12.24 per hour for 4 devices</td>",
       }) {
    EXPECT_TRUE(absl::StrContains(html, row)) << row;
  }
  costmodel::ClusterSpec free = SampleCluster();
  free.price_per_device_hour = 0;
  free.device.peak_flops_bf16 = 1979e12;
  const std::string unpriced = PlanHtml(SamplePlan(), free);
  EXPECT_FALSE(absl::StrContains(unpriced, "<th>price</th>"));
  EXPECT_TRUE(absl::StrContains(unpriced, "125 TFLOP/s f16, 1.98 PFLOP/s bf16"));
}

TEST(PlanHtmlTest, EmptyPlanDoesNotCrash) {
  const std::string html = PlanHtml(Plan{}, costmodel::ClusterSpec{});
  EXPECT_TRUE(absl::StrContains(html, "(no layers)"));
  EXPECT_TRUE(absl::StrContains(html, "(no per-device memory)"));
  EXPECT_TRUE(absl::StrContains(html, "</html>"));
}

}  // namespace
}  // namespace tessera::partitioner
