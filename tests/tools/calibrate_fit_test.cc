// The fits of `tessera calibrate`, on made-up measurements generated from known efficiencies
// and links: the fits recover them, and the fitted cost model reproduces the measurements.
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include "tessera/tools/calibrate_fit.h"

#include <gtest/gtest.h>

#include <vector>

#include "tessera/costmodel/collective_cost.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/builder.h"

namespace tessera::tools {
namespace {

using costmodel::Collective;
using costmodel::Efficiency;
using costmodel::OpWork;
using graph::OpClass;

constexpr double kOverhead = 2e-6;

costmodel::DeviceSpec Device() {
  return {.name = "test core", .peak_flops_f32 = 100e9, .memory_bytes = 1 << 30,
          .memory_bandwidth = 20e9};
}

costmodel::ClusterSpec Cluster(const costmodel::DeviceSpec& d, const Efficiency& e) {
  costmodel::ClusterSpec c{.name = "t", .device = d};
  c.intra_node = c.inter_node = {.bandwidth = 1e9, .latency = 1e-6};
  c.efficiency = e;
  return c;
}

// A sample whose kernels took exactly what `truth` predicts, less the per-call overhead
// (which the kernels' own timing does not contain).
KernelSample Sample(OpClass c, std::vector<OpWork> work, const Efficiency& truth) {
  KernelSample s{.label = "made up", .op_class = c};
  for (OpWork& w : work) w.op_class = c;
  s.work = std::move(work);
  const costmodel::RooflineCostModel model(Cluster(Device(), truth), truth);
  const double kernels = PredictedSeconds(s, model) - kOverhead * s.work.size();
  s.forward_s = 0.4 * kernels;
  s.backward_s = 0.6 * kernels;
  return s;
}

Efficiency Truth() {
  Efficiency e;
  e.flops[Efficiency::Index(OpClass::kDense)] = 0.63;
  e.bandwidth[Efficiency::Index(OpClass::kDense)] = 1;
  e.flops[Efficiency::Index(OpClass::kElementwise)] = 1;
  e.bandwidth[Efficiency::Index(OpClass::kElementwise)] = 0.37;
  e.op_overhead_s = kOverhead;
  return e;
}

TEST(PlannerOpWorkTest, ForwardAndBackwardAsThePlannerPricesThem) {
  graph::GraphBuilder b("t");
  graph::Value x = b.Input("x", {2, 4, 8, 8});
  graph::Value y = b.Conv2d(x, 4, 3, "conv3", {.padding = 1});
  b.Output(b.Conv2d(y, 4, 1, "conv1"));
  absl::StatusOr<graph::Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const costmodel::OpEstimate with_backward{.flops_forward = 10, .flops_backward = 20,
                                            .bytes_read = 300, .bytes_written = 100};
  const costmodel::OpEstimate forward_only{.flops_forward = 0, .bytes_read = 8, .bytes_written = 8};
  int convs = 0;
  for (graph::NodeId id = 0; id < g->num_nodes(); ++id) {
    const std::string& name = g->node(id).name;
    if (name != "conv3" && name != "conv1") continue;
    ++convs;
    const std::vector<OpWork> w = PlannerOpWork(*g, id, with_backward);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0].flops, 10);
    EXPECT_EQ(w[0].bytes, 400);
    EXPECT_EQ(w[1].flops, 20);
    EXPECT_EQ(w[1].bytes, 800);
    for (const OpWork& part : w) {
      EXPECT_EQ(part.op_class, OpClass::kDense);
      EXPECT_EQ(part.dtype, graph::DType::kF32);
      EXPECT_EQ(part.winograd, name == "conv3") << name;  // as the planner flags it
    }
    EXPECT_EQ(PlannerOpWork(*g, id, forward_only).size(), 1u);
  }
  EXPECT_EQ(convs, 2);
}

// Tessera's CPU convolutions have no Winograd kernels: the fit says so.
TEST(FitEfficiencyTest, WritesNoWinogradSpeedup) {
  const EfficiencyFit fit = FitEfficiency({}, Device(), kOverhead);
  EXPECT_EQ(fit.efficiency.winograd_speedup, 1);
}

TEST(FitEfficiencyTest, RecoversKnownEfficiencies) {
  const Efficiency truth = Truth();
  const std::vector<KernelSample> samples = {
      // 2 GFLOP over 4 MB: compute-bound; and a smaller one.
      Sample(OpClass::kDense, {{.flops = 2e9, .bytes = 4e6}, {.flops = 4e9, .bytes = 8e6}}, truth),
      Sample(OpClass::kDense, {{.flops = 3e7, .bytes = 1e6}}, truth),
      // 1 M elements read and written: memory-bound.
      Sample(OpClass::kElementwise, {{.flops = 1e6, .bytes = 8e6}, {.flops = 1e6, .bytes = 16e6}},
             truth),
  };
  const EfficiencyFit fit = FitEfficiency(samples, Device(), kOverhead);
  const int dense = Efficiency::Index(OpClass::kDense);
  const int elementwise = Efficiency::Index(OpClass::kElementwise);
  EXPECT_NEAR(fit.efficiency.flops[dense], 0.63, 1e-9);
  EXPECT_EQ(fit.efficiency.bandwidth[dense], 1);
  EXPECT_EQ(fit.efficiency.flops[elementwise], 1);
  EXPECT_NEAR(fit.efficiency.bandwidth[elementwise], 0.37, 1e-9);
  EXPECT_EQ(fit.efficiency.op_overhead_s, kOverhead);
  EXPECT_TRUE(fit.classes[dense].compute_bound);
  EXPECT_FALSE(fit.classes[elementwise].compute_bound);
  EXPECT_EQ(fit.classes[dense].samples, 2);
  EXPECT_FALSE(fit.classes[dense].clamped);
  // Classes without samples keep the defaults.
  const int loss = Efficiency::Index(OpClass::kLoss);
  EXPECT_EQ(fit.classes[loss].samples, 0);
  EXPECT_EQ(fit.efficiency.flops[loss], Efficiency{}.flops[loss]);
  EXPECT_EQ(fit.efficiency.bandwidth[loss], Efficiency{}.bandwidth[loss]);
}

TEST(FitEfficiencyTest, FittedModelReproducesTheClassTotals) {
  // Samples no single efficiency explains exactly: the class total still matches.
  Efficiency fast = Truth(), slow = Truth();
  slow.flops[Efficiency::Index(OpClass::kDense)] = 0.2;
  const std::vector<KernelSample> samples = {
      Sample(OpClass::kDense, {{.flops = 2e9, .bytes = 4e6}}, fast),
      Sample(OpClass::kDense, {{.flops = 5e8, .bytes = 1e6}, {.flops = 1e9, .bytes = 2e6}}, slow),
  };
  costmodel::DeviceSpec device = Device();
  const EfficiencyFit fit = FitEfficiency(samples, device, kOverhead);
  const costmodel::RooflineCostModel model(Cluster(device, fit.efficiency));
  double predicted = 0, measured = 0;
  for (const KernelSample& s : samples) {
    predicted += PredictedSeconds(s, model);
    measured += s.measured_s() + kOverhead * s.work.size();
  }
  EXPECT_NEAR(predicted / measured, 1, 1e-9);
  const int dense = Efficiency::Index(OpClass::kDense);
  EXPECT_GT(fit.efficiency.flops[dense], 0.2);
  EXPECT_LT(fit.efficiency.flops[dense], 0.63);
  EXPECT_NEAR(fit.classes[dense].predicted_s / fit.classes[dense].measured_s, 1, 1e-9);
}

TEST(FitEfficiencyTest, FasterThanPeakIsClampedThenThePeakIsRaised) {
  // Measured at 1.6x the device's peak: no fraction <= 1 explains it.
  costmodel::DeviceSpec device = Device();
  costmodel::DeviceSpec faster = device;
  faster.peak_flops_f32 *= 1.6;
  Efficiency one = Truth();
  one.flops[Efficiency::Index(OpClass::kDense)] = 1;
  KernelSample s{.label = "fast gemm", .op_class = OpClass::kDense,
                 .work = {{.flops = 4e9, .bytes = 1e6, .op_class = OpClass::kDense}}};
  s.forward_s = PredictedSeconds(s, costmodel::RooflineCostModel(Cluster(faster, one))) - kOverhead;

  const EfficiencyFit clamped = FitEfficiency({s}, device, kOverhead);
  const int dense = Efficiency::Index(OpClass::kDense);
  EXPECT_EQ(clamped.efficiency.flops[dense], 1);
  EXPECT_TRUE(clamped.classes[dense].clamped);

  const EfficiencyFit raised = FitEfficiencyRaisingPeak({s}, device, kOverhead);
  EXPECT_FALSE(raised.classes[dense].clamped);
  EXPECT_NEAR(device.peak_flops_f32 / faster.peak_flops_f32, 1, 1e-4);
  EXPECT_NEAR(raised.classes[dense].predicted_s / raised.classes[dense].measured_s, 1, 1e-6);
  EXPECT_EQ(device.memory_bandwidth, Device().memory_bandwidth);  // memory-bound classes: none
}

TEST(FitEfficiencyTest, MemoryBoundClassesFasterThanTheBandwidthStayClamped) {
  costmodel::DeviceSpec device = Device();
  // A look-up whose nominal bytes (the whole table) would need 3x the bandwidth.
  KernelSample lookup{.label = "lookup", .op_class = OpClass::kEmbedding,
                      .work = {{.flops = 0, .bytes = 6e6, .op_class = OpClass::kEmbedding}}};
  lookup.forward_s = 6e6 / (3 * device.memory_bandwidth);
  // Shorter than its overhead: no peak could explain it.
  KernelSample tiny{.label = "tiny", .op_class = OpClass::kLayout,
                    .work = {{.flops = 0, .bytes = 64, .op_class = OpClass::kLayout}}};
  tiny.forward_s = 1e-9;
  const EfficiencyFit fit = FitEfficiencyRaisingPeak({lookup, tiny}, device, kOverhead);
  for (OpClass c : {OpClass::kEmbedding, OpClass::kLayout}) {
    EXPECT_TRUE(fit.classes[Efficiency::Index(c)].clamped) << graph::OpClassName(c);
    EXPECT_EQ(fit.efficiency.bandwidth[Efficiency::Index(c)], 1) << graph::OpClassName(c);
    EXPECT_GT(fit.classes[Efficiency::Index(c)].predicted_s,
              fit.classes[Efficiency::Index(c)].measured_s);
  }
  EXPECT_EQ(device.memory_bandwidth, Device().memory_bandwidth);
  EXPECT_EQ(device.peak_flops_f32, Device().peak_flops_f32);
}

std::vector<CommSample> RingSamples(double latency, double bandwidth) {
  std::vector<CommSample> samples;
  for (int p : {2, 4}) {
    for (Collective kind : {Collective::kAllReduce, Collective::kAllGather}) {
      for (double bytes : {4096.0, 1e6, 32e6}) {
        const double steps = kind == Collective::kAllReduce ? 2.0 * (p - 1) : p - 1;
        samples.push_back({.kind = kind, .ranks = p, .bytes = bytes,
                           .measured_s = steps * latency + steps / p * bytes / bandwidth});
      }
    }
  }
  return samples;
}

TEST(FitLinkTest, RecoversLatencyAndBandwidthAndReproducesCollectiveSeconds) {
  const std::vector<CommSample> samples = RingSamples(7e-6, 3.5e9);
  absl::StatusOr<costmodel::LinkSpec> link = FitLink(samples);
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_NEAR(link->latency / 7e-6, 1, 1e-9);
  EXPECT_NEAR(link->bandwidth / 3.5e9, 1, 1e-9);
  // The cost model with this link on one node gives back every measured time.
  costmodel::ClusterSpec c = Cluster(Device(), Efficiency{});
  c.devices_per_node = 4;
  c.intra_node = c.inter_node = *link;
  for (const CommSample& s : samples) {
    std::vector<int> group;
    for (int r = 0; r < s.ranks; ++r) group.push_back(r);
    EXPECT_NEAR(costmodel::CollectiveSeconds(s.kind, s.bytes, group, c) / s.measured_s, 1, 1e-9)
        << costmodel::CollectiveName(s.kind) << " " << s.bytes;
  }
}

TEST(FitLinkTest, NoLatencyFitsBandwidthAlone) {
  std::vector<CommSample> samples = RingSamples(0, 2e9);
  for (CommSample& s : samples) s.measured_s *= s.bytes < 1e4 ? 0.5 : 1;  // latency would be < 0
  absl::StatusOr<costmodel::LinkSpec> link = FitLink(samples);
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_EQ(link->latency, 0);
  EXPECT_GT(link->bandwidth, 0);
}

TEST(FitLinkTest, RefusesWhatCannotBeFitted) {
  absl::StatusOr<costmodel::LinkSpec> one = FitLink({{.bytes = 1e6, .measured_s = 1e-3}});
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("at least two"), std::string::npos) << one.status();

  absl::StatusOr<costmodel::LinkSpec> broadcast =
      FitLink({{.kind = Collective::kBroadcast, .bytes = 1e6, .measured_s = 1e-3},
               {.bytes = 1e6, .measured_s = 1e-3}});
  ASSERT_FALSE(broadcast.ok());
  EXPECT_NE(broadcast.status().message().find("broadcast"), std::string::npos)
      << broadcast.status();

  // Bigger messages faster than small ones: no positive bandwidth.
  absl::StatusOr<costmodel::LinkSpec> shrinking =
      FitLink({{.bytes = 1e3, .measured_s = 1e-3}, {.bytes = 1e7, .measured_s = 1e-5}});
  ASSERT_FALSE(shrinking.ok());
  EXPECT_NE(shrinking.status().message().find("do not grow"), std::string::npos)
      << shrinking.status();
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_CALIBRATE_COMMAND
