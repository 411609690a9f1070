// Planning with costmodel::MeasuredCostModel: the layers it names are priced at the measured
// times, scaled by the option's share of the op's work; the others keep the fallback's price.
#include <memory>

#include "gtest/gtest.h"
#include "tessera/costmodel/measured_cost_model.h"
#include "tessera/partitioner/planner.h"
#include "fake_cost_model.h"
#include "test_mlp.h"

namespace tessera::partitioner {
namespace {

using costmodel::MeasuredCostModel;
using costmodel::MeasuredOpTimes;
using testing::Mlp;

costmodel::ClusterSpec Cluster() { return testing::MlpCluster(int64_t{1} << 34); }

const LayerPlan& Layer(const Plan& plan, const std::string& name) {
  for (const LayerPlan& l : plan.layers) {
    if (l.name == name) return l;
  }
  ADD_FAILURE() << "no layer " << name;
  return plan.layers.front();
}

TEST(MeasuredOpTimesTest, NamedLayersTakeTheMeasuredTimesScaledByTheirShare) {
  testing::FakeCostModel fake;
  const graph::Graph g = Mlp(16);
  const PlanOptions base{.devices = 2, .planner = PlannerKind::kData};
  absl::StatusOr<Plan> model = PlanModel(g, Cluster(), fake, base);
  ASSERT_TRUE(model.ok()) << model.status();

  MeasuredOpTimes m{.share = 0.5};  // measured on the 1/2 batch shard a data plan runs
  m.ops["fc1"] = {.forward_s = 1e-3, .backward_s = 2e-3};
  m.ops["not_a_node"] = {.forward_s = 9, .backward_s = 9};
  absl::StatusOr<Plan> measured = PlanModel(g, Cluster(), MeasuredCostModel(fake, m), base);
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_DOUBLE_EQ(Layer(*measured, "fc1").compute_s, 3e-3);
  // Not measured: the cost model's price, as without the table.
  EXPECT_DOUBLE_EQ(Layer(*measured, "fc2").compute_s, Layer(*model, "fc2").compute_s);
  EXPECT_NE(Layer(*model, "fc1").compute_s, 3e-3);
  EXPECT_NEAR(measured->predicted.compute_s - model->predicted.compute_s,
              3e-3 - Layer(*model, "fc1").compute_s, 1e-12);

  // Measured on a 1/4 shard, the 1/2 shard of a 2-device plan does twice the work.
  m.share = 0.25;
  absl::StatusOr<Plan> quarter = PlanModel(g, Cluster(), MeasuredCostModel(fake, m), base);
  ASSERT_TRUE(quarter.ok()) << quarter.status();
  EXPECT_DOUBLE_EQ(Layer(*quarter, "fc1").compute_s, 6e-3);
}

TEST(MeasuredOpTimesTest, LateMultiplyAddsTheCostModelsExtraBackwardFlops) {
  testing::FakeCostModel fake;
  const graph::Graph g = Mlp(16);
  MeasuredOpTimes m{.share = 0.5};
  m.ops["fc2"] = {.forward_s = 1e-3, .backward_s = 2e-3};
  const PlanOptions o{.devices = 2, .planner = PlannerKind::kLate};
  absl::StatusOr<Plan> plan = PlanModel(g, Cluster(), MeasuredCostModel(fake, m), o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const LayerPlan& fc2 = Layer(*plan, "fc2");
  ASSERT_EQ(fc2.strategy, Strategy::kLateMultiply);
  EXPECT_GT(fc2.compute_s, 3e-3);  // the local dW of the gathered batch costs extra
}

}  // namespace
}  // namespace tessera::partitioner
