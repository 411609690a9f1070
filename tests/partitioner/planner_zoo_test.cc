// Acceptance on zoo models with the roofline cost model (v100-vpc32).
#if __has_include("tessera/costmodel/roofline_cost_model.h")

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/partitioner/planner.h"

namespace tessera::partitioner {
namespace {

Plan PlanZoo(const std::string& model, int devices, int64_t batch, PlannerKind kind) {
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel(model, batch);
  EXPECT_TRUE(g.ok()) << g.status();
  absl::StatusOr<costmodel::ClusterSpec> base = costmodel::LoadCluster("v100-vpc32");
  EXPECT_TRUE(base.ok()) << base.status();
  const costmodel::ClusterSpec cluster = base->WithDevices(devices);
  const costmodel::RooflineCostModel cost(cluster);
  absl::StatusOr<Plan> plan =
      PlanModel(*g, cluster, cost, {.devices = devices, .planner = kind});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan{};
}

const LayerPlan* Find(const Plan& plan, const std::string& name) {
  for (const LayerPlan& l : plan.layers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// Convolutions data_parallel; every fully-connected layer of more than `split_params`
// parameters model_parallel or late_multiply (and at least two of more than 10M counted);
// faster than both baselines.
void ExpectHybrid(const std::string& model, int64_t split_params) {
  const Plan plan = PlanZoo(model, 64, 64 * 32, PlannerKind::kAuto);
  ASSERT_FALSE(plan.layers.empty());
  int big_fc = 0, split_fc = 0;
  for (const LayerPlan& l : plan.layers) {
    if (l.op == "Conv") EXPECT_EQ(l.strategy, Strategy::kDataParallel) << l.name << ": " << l.reason;
    if (l.op != "Gemm") continue;
    big_fc += l.params > 10'000'000;
    if (l.params > split_params) {
      ++split_fc;
      EXPECT_TRUE(l.strategy == Strategy::kModelParallel || l.strategy == Strategy::kLateMultiply)
          << l.name << ": " << l.reason;
    }
  }
  EXPECT_GE(big_fc, 2);
  EXPECT_GE(split_fc, 1);
  EXPECT_LT(plan.predicted.step_time_s, plan.data_parallel.step_time_s);
  EXPECT_LT(plan.predicted.step_time_s, plan.model_parallel.step_time_s);
  EXPECT_TRUE(plan.memory.fits);
}

// fc6 (37.7M parameters) and fc7 (16.8M) split.
TEST(PlannerZooTest, AlexNetIsHybridAt64Devices) { ExpectHybrid("alexnet", 10'000'000); }
// VGG-16: classifier.0 (102.8M parameters, a 411 MB all-reduce) split. classifier.3's
// 67 MB all-reduce hides behind the convolutions' backward, so the cost model keeps it
// data_parallel at this batch (docs/partitioner.md, "Measured").
TEST(PlannerZooTest, Vgg16IsHybridAt64Devices) { ExpectHybrid("vgg16", 50'000'000); }

TEST(PlannerZooTest, GnmtClassifierIsNotDataParallel) {
  const Plan plan = PlanZoo("gnmt", 64, 128, PlannerKind::kAuto);
  const LayerPlan* classifier = Find(plan, "decoder.classifier.classifier");
  ASSERT_NE(classifier, nullptr);
  EXPECT_NE(classifier->strategy, Strategy::kDataParallel) << classifier->reason;
  EXPECT_LT(plan.predicted.step_time_s, plan.data_parallel.step_time_s);
}

struct Case {
  std::string model;
  int64_t per_device;  // samples per device
};

// The heuristic within 5% of the exact planner at 8, 64 and 512 devices.
TEST(PlannerZooTest, HeuristicWithinFivePercentOfExact) {
  const Case cases[] = {{"alexnet", 32}, {"vgg16", 32}, {"resnet50", 32},
                        {"gnmt", 2},     {"crnn", 32},  {"transformer", 1}};
  for (const Case& c : cases) {
    for (int devices : {8, 64, 512}) {
      const Plan h = PlanZoo(c.model, devices, c.per_device * devices, PlannerKind::kAuto);
      const Plan x = PlanZoo(c.model, devices, c.per_device * devices, PlannerKind::kOptimal);
      std::printf("%-12s %4d devices: heuristic %.4f s, exact %.4f s, data %.4f s, model %.4f s\n",
                  c.model.c_str(), devices, h.predicted.step_time_s, x.predicted.step_time_s,
                  h.data_parallel.step_time_s, h.model_parallel.step_time_s);
      EXPECT_LE(h.predicted.step_time_s, 1.05 * x.predicted.step_time_s)
          << c.model << " at " << devices;
    }
  }
}

}  // namespace
}  // namespace tessera::partitioner

#endif
