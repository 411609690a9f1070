// The optional "efficiency" object of cluster files: round trips, partial tables, every
// validation error naming the field, and RooflineCostModel using a cluster's own efficiency.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"

namespace tessera::costmodel {
namespace {

using graph::OpClass;
using Json = nlohmann::json;

Efficiency Measured() {
  Efficiency e;
  for (int i = 0; i < kOpClassCount; ++i) {
    e.flops[i] = 0.05 + 0.09 * i;  // all distinct from the defaults
    e.bandwidth[i] = 1.0 - 0.07 * i;
  }
  e.op_overhead_s = 1.75e-6;
  e.overlap_slowdown = 2.5;
  e.winograd_speedup = 1;
  return e;
}

// What an efficiency object listing nothing reads as: the default fractions, and no Winograd
// (an efficiency object is a measurement, normally of Tessera's CPU kernels).
Efficiency MeasuredDefaults() {
  Efficiency e;
  e.winograd_speedup = 1;
  return e;
}

ClusterSpec Calibrated() {
  ClusterSpec c = *ClusterPreset("m40-pcie");
  c.name = "local";
  c.efficiency = Measured();
  return c;
}

TEST(ClusterEfficiencyJsonTest, RoundTripsAndIsWrittenOnlyWhenPresent) {
  const ClusterSpec c = Calibrated();
  const std::string text = ClusterToJson(c);
  absl::StatusOr<ClusterSpec> back = ClusterFromJson(text, "local.json");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, c);
  ASSERT_TRUE(back->efficiency.has_value());
  EXPECT_EQ(back->efficiency->flops[Efficiency::Index(OpClass::kRecurrent)], 0.05 + 0.09 * 2);

  const Json doc = Json::parse(text);
  EXPECT_EQ(doc["efficiency"]["flops"]["dense"], 0.05);
  EXPECT_EQ(doc["efficiency"]["bandwidth"]["loss"], 1.0 - 0.07 * 9);
  EXPECT_EQ(doc["efficiency"]["op_overhead_s"], 1.75e-6);
  EXPECT_EQ(doc["efficiency"]["overlap_slowdown"], 2.5);
  EXPECT_EQ(doc["efficiency"]["winograd_speedup"], 1);
  EXPECT_EQ(doc["efficiency"]["flops"].size(), static_cast<size_t>(kOpClassCount));

  const ClusterSpec preset = *ClusterPreset("v100-vpc32");
  EXPECT_FALSE(Json::parse(ClusterToJson(preset)).contains("efficiency"));
  EXPECT_FALSE(ClusterFromJson(ClusterToJson(preset), "p.json")->efficiency.has_value());
}

TEST(ClusterEfficiencyJsonTest, ClassesNotListedKeepTheDefaults) {
  Json doc = Json::parse(ClusterToJson(*ClusterPreset("v100-vpc32")));
  doc["efficiency"] = Json{{"flops", {{"dense", 0.42}}}, {"bandwidth", {{"softmax", 0.3}}}};
  absl::StatusOr<ClusterSpec> c = ClusterFromJson(doc.dump(), "partial.json");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->efficiency.has_value());
  Efficiency expected = MeasuredDefaults();
  expected.flops[Efficiency::Index(OpClass::kDense)] = 0.42;
  expected.bandwidth[Efficiency::Index(OpClass::kSoftmax)] = 0.3;
  EXPECT_EQ(*c->efficiency, expected);
  EXPECT_EQ(c->efficiency->op_overhead_s, 5e-6);
  EXPECT_EQ(c->efficiency->overlap_slowdown, 0);  // collectives beside compute

  doc["efficiency"] = Json::object();  // an empty object: all defaults, but present
  c = ClusterFromJson(doc.dump(), "empty.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->efficiency, MeasuredDefaults());
  // No efficiency object at all: the GPU defaults, Winograd included.
  doc.erase("efficiency");
  c = ClusterFromJson(doc.dump(), "none.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->efficiency.has_value());
  EXPECT_EQ(RooflineCostModel(*c).efficiency().winograd_speedup, 1.5);
}

// A file that measured Winograd kernels says so.
TEST(ClusterEfficiencyJsonTest, WinogradSpeedupIsReadWhenGiven) {
  Json doc = Json::parse(ClusterToJson(*ClusterPreset("v100-vpc32")));
  doc["efficiency"] = Json{{"winograd_speedup", 2.25}};
  absl::StatusOr<ClusterSpec> c = ClusterFromJson(doc.dump(), "gpu.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->efficiency->winograd_speedup, 2.25);
}

struct BadCase {
  const char* what;
  std::function<void(Json&)> mutate;
  const char* expected;  // must appear after "my.json: "
};

TEST(ClusterEfficiencyJsonTest, BadValuesAreRefusedNamingTheField) {
  const std::vector<BadCase> cases = {
      {"zero fraction", [](Json& e) { e["flops"]["dense"] = 0; },
       "efficiency.flops.dense: got 0; allowed: > 0 and <= 1"},
      {"above one", [](Json& e) { e["bandwidth"]["softmax"] = 1.5; },
       "efficiency.bandwidth.softmax: got 1.5; allowed: > 0 and <= 1"},
      {"negative", [](Json& e) { e["bandwidth"]["layout"] = -0.2; },
       "efficiency.bandwidth.layout: got -0.2; allowed: > 0"},
      {"string fraction", [](Json& e) { e["flops"]["recurrent"] = "high"; },
       "efficiency.flops.recurrent: expected a number, got \"high\""},
      {"unknown class", [](Json& e) { e["flops"]["conv"] = 0.5; },
       "efficiency.flops: unknown field \"conv\"; expected one of \"dense\", \"embedding\", "
       "\"recurrent\", \"normalization\", \"pooling\", \"elementwise\", \"reduction\", "
       "\"softmax\", \"layout\", \"loss\""},
      {"table not an object", [](Json& e) { e["bandwidth"] = 0.8; },
       "efficiency.bandwidth: expected an object, got 0.8"},
      {"negative overhead", [](Json& e) { e["op_overhead_s"] = -1e-6; },
       "efficiency.op_overhead_s: got -1e-06; allowed: >= 0"},
      {"absurd overhead", [](Json& e) { e["op_overhead_s"] = 5; },
       "efficiency.op_overhead_s: got 5; allowed: >= 0 and <= 1"},
      {"negative overlap slowdown", [](Json& e) { e["overlap_slowdown"] = -0.5; },
       "efficiency.overlap_slowdown: got -0.5; allowed: >= 0"},
      {"absurd overlap slowdown", [](Json& e) { e["overlap_slowdown"] = 11; },
       "efficiency.overlap_slowdown: got 11; allowed: >= 0 and <= 10"},
      {"Winograd slower than direct", [](Json& e) { e["winograd_speedup"] = 0.5; },
       "efficiency.winograd_speedup: got 0.5; allowed: >= 1 and <= 4"},
      {"Winograd beyond F(4x4,3x3)", [](Json& e) { e["winograd_speedup"] = 9; },
       "efficiency.winograd_speedup: got 9; allowed: >= 1 and <= 4"},
      {"unknown field", [](Json& e) { e["latency"] = 1; },
       "efficiency: unknown field \"latency\"; expected one of \"flops\", \"bandwidth\", "
       "\"op_overhead_s\", \"overlap_slowdown\", \"winograd_speedup\""},
      {"not an object", [](Json& e) { e = Json::array({0.5}); },
       "efficiency: expected an object, got an array"},
  };
  const Json good = Json::parse(ClusterToJson(Calibrated()));
  for (const BadCase& c : cases) {
    Json doc = good;
    c.mutate(doc["efficiency"]);
    absl::StatusOr<ClusterSpec> r = ClusterFromJson(doc.dump(), "my.json");
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.status().message().find(std::string("my.json: ") + c.expected), std::string::npos)
        << c.what << ": " << r.status();
  }
}

TEST(ClusterEfficiencyJsonTest, RooflineCostModelUsesTheClustersEfficiency) {
  const ClusterSpec c = Calibrated();
  const Efficiency e = Measured();
  const OpWork dense{.flops = 7e9, .bytes = 1e3, .op_class = OpClass::kDense};
  const OpWork relu{.flops = 1e3, .bytes = 2.88e8, .op_class = OpClass::kElementwise};
  const RooflineCostModel model(c);
  EXPECT_EQ(model.efficiency(), e);
  // m40-pcie: 7e12 FLOP/s, 288e9 bytes/s; dense flops 0.05, elementwise bandwidth 0.65.
  EXPECT_DOUBLE_EQ(model.OpTime(dense), 7e9 / (7e12 * 0.05) + 1.75e-6);
  EXPECT_DOUBLE_EQ(model.OpTime(relu), 2.88e8 / (288e9 * (1.0 - 0.07 * 5)) + 1.75e-6);
  // An explicit efficiency wins over the cluster's; a preset gets the defaults.
  const RooflineCostModel explicit_default(c, Efficiency{});
  EXPECT_DOUBLE_EQ(explicit_default.OpTime(dense), 7e9 / (7e12 * 0.7) + 5e-6);
  const RooflineCostModel preset(*ClusterPreset("m40-pcie"));
  EXPECT_EQ(preset.efficiency(), Efficiency{});
  // Sizing the cluster keeps its efficiency.
  EXPECT_EQ(RooflineCostModel(c.WithDevices(3)).efficiency(), e);
}

}  // namespace
}  // namespace tessera::costmodel
