#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/planner.h"
#include "tessera/tests/partitioner/fake_cost_model.h"
#include "tessera/tests/partitioner/plan_output_contract.h"
#include "tessera/tests/partitioner/plan_output_sample.h"
#include "tessera/tests/partitioner/test_mlp.h"

namespace tessera::partitioner {
namespace {

using testing_contract::PlanContractViolations;
using testing_sample::SamplePlan;

TEST(PlanToJsonTest, SatisfiesTheContract) {
  const Plan plan = SamplePlan();
  const nlohmann::json j = PlanToJson(plan);
  const std::vector<std::string> problems = PlanContractViolations(j, plan.layers.size(), 4);
  EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
}

TEST(PlanToJsonTest, ContractCheckIsStrict) {
  const Plan plan = SamplePlan();
  const nlohmann::json good = PlanToJson(plan);
  struct Mutation {
    const char* what;
    nlohmann::json::json_pointer at;
    nlohmann::json value;  // null: erase
  };
  const std::vector<Mutation> mutations = {
      {"model.params missing", nlohmann::json::json_pointer("/model/params"), nullptr},
      {"model.params a float", nlohmann::json::json_pointer("/model/params"), 1.5},
      {"cluster.devices a string", nlohmann::json::json_pointer("/cluster/devices"), "4"},
      {"layer name missing", nlohmann::json::json_pointer("/layers/1/name"), nullptr},
      {"param_names of ints", nlohmann::json::json_pointer("/layers/0/param_names"), {1, 2}},
      {"comm_bytes a float", nlohmann::json::json_pointer("/layers/2/comm_bytes"), 0.5},
      {"strategy unknown", nlohmann::json::json_pointer("/layers/2/strategy"), "magic"},
      {"exposed_comm_s missing", nlohmann::json::json_pointer("/predicted/exposed_comm_s"), nullptr},
      {"peak_bytes of floats", nlohmann::json::json_pointer("/memory/peak_bytes"), {1.5, 2, 3, 4}},
      {"peak_bytes too short", nlohmann::json::json_pointer("/memory/peak_bytes"), {1, 2}},
      {"fits a number", nlohmann::json::json_pointer("/memory/fits"), 1},
      {"baseline fits missing", nlohmann::json::json_pointer("/baselines/model_parallel/fits"),
       nullptr},
  };
  for (const Mutation& m : mutations) {
    nlohmann::json bad = good;
    if (m.value.is_null()) {
      bad.at(m.at.parent_pointer()).erase(m.at.back());
    } else {
      bad[m.at] = m.value;
    }
    EXPECT_FALSE(PlanContractViolations(bad, plan.layers.size(), 4).empty()) << m.what;
  }
  nlohmann::json fewer = good;
  fewer["layers"].erase(fewer["layers"].begin());
  EXPECT_FALSE(PlanContractViolations(fewer, plan.layers.size(), 4).empty());
}

TEST(PlanToJsonTest, CarriesThePlanValues) {
  const Plan plan = SamplePlan();
  const nlohmann::json j = PlanToJson(plan);
  EXPECT_EQ(j["model"]["name"], "tiny<net>");
  EXPECT_EQ(j["model"]["params"], 1000);
  EXPECT_EQ(j["model"]["batch"], 64);
  EXPECT_EQ(j["cluster"]["name"], "v100-vpc32");
  EXPECT_EQ(j["planner"], "heuristic");
  EXPECT_EQ(j["layers"][0]["strategy"], "data_parallel");
  EXPECT_EQ(j["layers"][1]["strategy"], "model_parallel");
  EXPECT_EQ(j["layers"][2]["strategy"], "late_multiply");
  EXPECT_EQ(j["layers"][3]["strategy"], "replicated");
  EXPECT_EQ(j["layers"][1]["name"], "fc<script>&");  // JSON keeps names as they are
  EXPECT_EQ(j["layers"][0]["param_names"], nlohmann::json({"conv1.weight", "conv1.bias"}));
  EXPECT_EQ(j["layers"][3]["param_names"], nlohmann::json::array());
  EXPECT_EQ(j["layers"][0]["comm_bytes"], 1 << 20);
  EXPECT_EQ(j["layers"][0]["reason"], "because conv1");
  EXPECT_EQ(j["layers"][1]["memory_bytes"], 800 * 16);
  EXPECT_DOUBLE_EQ(j["predicted"]["step_time_s"].get<double>(), 0.008);
  EXPECT_DOUBLE_EQ(j["predicted"]["exposed_comm_s"].get<double>(), 0.0009);
  EXPECT_EQ(j["memory"]["peak_bytes"][3], int64_t{20} << 30);
  EXPECT_FALSE(j["memory"]["fits"].get<bool>());
  EXPECT_EQ(j["memory"]["breakdown"]["comm_buffer_bytes"], 25 << 20);
  EXPECT_EQ(j["gradient_buckets"], nlohmann::json({{"first_bucket_bytes", 512 << 10},
                                                   {"bucket_bytes", 4 << 20},
                                                   {"tuned", true},
                                                   {"count", 3}}));
  EXPECT_DOUBLE_EQ(j["baselines"]["data_parallel"]["speedup"].get<double>(), 0.012 / 0.008);
  EXPECT_DOUBLE_EQ(j["baselines"]["model_parallel"]["speedup"].get<double>(), 0.02 / 0.008);
  // Round trip through text keeps integers integers.
  const nlohmann::json back = nlohmann::json::parse(j.dump());
  EXPECT_TRUE(PlanContractViolations(back, plan.layers.size(), 4).empty());
}

TEST(PlanToJsonTest, CarriesTheLayouts) {
  const nlohmann::json j = PlanToJson(SamplePlan());
  EXPECT_EQ(j["layers"][1]["layouts"], nlohmann::json::parse(R"(
      {"output": "feature", "inputs": [{"tensor": "conv1.out", "layout": "replicated"}],
       "partial_dx": true})"));
  // A layer without activation inputs still says where its output is.
  EXPECT_EQ(j["layers"][0]["layouts"], nlohmann::json::parse(R"(
      {"output": "batch", "inputs": [], "partial_dx": false})"));
}

// The layer of `plan` named `name` (null when there is none).
nlohmann::json LayerNamed(const nlohmann::json& plan, const std::string& name) {
  for (const nlohmann::json& l : plan["layers"]) {
    if (l["name"] == name) return l;
  }
  return nullptr;
}

// The planner fills the layouts of the option it chose, inputs by their graph names.
TEST(PlanToJsonTest, PlannedLayersCarryTheirChosenLayouts) {
  testing::FakeCostModel fake;
  const graph::Graph g = testing::Mlp(16);
  const costmodel::ClusterSpec cluster = testing::MlpCluster(int64_t{1} << 34);
  auto model = PlanModel(g, cluster, fake, {.devices = 4, .planner = PlannerKind::kModel});
  ASSERT_TRUE(model.ok()) << model.status();
  const nlohmann::json fc1 = LayerNamed(PlanToJson(*model), "fc1");
  ASSERT_FALSE(fc1.is_null());
  ASSERT_EQ(fc1["strategy"], "model_parallel");
  EXPECT_EQ(fc1["layouts"]["output"], "feature");
  EXPECT_EQ(fc1["layouts"]["inputs"],
            nlohmann::json::parse(R"([{"tensor": "x", "layout": "replicated"}])"));
  EXPECT_EQ(fc1["layouts"]["partial_dx"], true);
  auto data = PlanModel(g, cluster, fake, {.devices = 4, .planner = PlannerKind::kData});
  ASSERT_TRUE(data.ok()) << data.status();
  const nlohmann::json dp = LayerNamed(PlanToJson(*data), "fc1");
  ASSERT_EQ(dp["strategy"], "data_parallel");
  EXPECT_EQ(dp["layouts"]["output"], "batch");
  EXPECT_EQ(dp["layouts"]["inputs"],
            nlohmann::json::parse(R"([{"tensor": "x", "layout": "batch"}])"));
  EXPECT_EQ(dp["layouts"]["partial_dx"], false);
}

TEST(PlanToJsonTest, EmptyPlanStillHasEveryKey) {
  Plan plan;
  plan.devices = 0;
  const nlohmann::json j = PlanToJson(plan);
  EXPECT_TRUE(PlanContractViolations(j, 0, 0).empty());
  EXPECT_TRUE(j["baselines"]["data_parallel"]["speedup"].is_null());
}

}  // namespace
}  // namespace tessera::partitioner
