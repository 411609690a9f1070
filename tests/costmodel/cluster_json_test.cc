// Cluster JSON files: round trips, loading from disk, and one test per
// validation error checking that it names the source and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

using Json = nlohmann::json;

TEST(ClusterJsonTest, EveryPresetRoundTrips) {
  for (const std::string& name : ClusterPresetNames()) {
    absl::StatusOr<ClusterSpec> preset = ClusterPreset(name);
    ASSERT_TRUE(preset.ok()) << preset.status();
    for (const ClusterSpec& c : {*preset, preset->WithDevices(12), preset->WithDevices(3)}) {
      absl::StatusOr<ClusterSpec> back = ClusterFromJson(ClusterToJson(c), name);
      ASSERT_TRUE(back.ok()) << back.status() << "\n" << ClusterToJson(c);
      EXPECT_EQ(*back, c) << ClusterToJson(c);
      EXPECT_EQ(back->devices(), c.devices());
    }
  }
}

TEST(ClusterJsonTest, PartialNodeIsWrittenAsDevices) {
  const ClusterSpec c = ClusterPreset("v100-vpc32")->WithDevices(12);
  const Json doc = Json::parse(ClusterToJson(c));
  EXPECT_EQ(doc["devices"], 12);
  EXPECT_EQ(doc["nodes"], 2);
  EXPECT_FALSE(Json::parse(ClusterToJson(c.WithDevices(16))).contains("devices"));
}

TEST(ClusterJsonTest, OptionalFieldsTakeDefaults) {
  Json doc = Json::parse(ClusterToJson(*ClusterPreset("v100-vpc32")));
  doc["device"]["peak_flops"].erase("f16");
  doc["device"]["peak_flops"].erase("bf16");
  doc.erase("source");
  doc["device"]["memory_bytes"] = 1.6e10;  // an integral number written as a float
  absl::StatusOr<ClusterSpec> c = ClusterFromJson(doc.dump(), "x.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->device.peak_flops(graph::DType::kF16), 15.7e12);
  EXPECT_EQ(c->source, "");
  EXPECT_EQ(c->device.memory_bytes, int64_t{16000000000});
}

TEST(ClusterJsonTest, LoadsFileAndReportsMissingFile) {
  const std::filesystem::path dir = std::filesystem::path(TESSERA_BINARY_DIR) / "cluster_json_test";
  std::filesystem::create_directories(dir);
  ClusterSpec c = *ClusterPreset("h100-dgx");
  c.name = "my-h100";
  c.nodes = 3;
  const std::string path = (dir / "my-h100.json").string();
  std::ofstream(path) << ClusterToJson(c);
  absl::StatusOr<ClusterSpec> loaded = LoadCluster(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, c);

  const std::string missing = (dir / "nope.json").string();
  absl::StatusOr<ClusterSpec> bad = LoadCluster(missing);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(bad.status().message().find(missing), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("v100-vpc32"), std::string::npos) << bad.status();

  absl::StatusOr<ClusterSpec> directory = LoadCluster(dir.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find(dir.string()), std::string::npos);

  std::ofstream(dir / "broken.json") << "{\"name\": ";
  absl::StatusOr<ClusterSpec> broken = LoadCluster((dir / "broken.json").string());
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("broken.json: not valid JSON"), std::string::npos)
      << broken.status();
}

struct BadCase {
  const char* what;
  std::function<void(Json&)> mutate;
  const char* expected;  // must appear in the message after "my.json: "
};

TEST(ClusterJsonTest, EveryValidationErrorNamesTheField) {
  const std::vector<BadCase> cases = {
      {"missing nodes", [](Json& d) { d.erase("nodes"); }, "missing field \"nodes\""},
      {"missing f32", [](Json& d) { d["device"]["peak_flops"].erase("f32"); },
       "device.peak_flops: missing field \"f32\""},
      {"missing device", [](Json& d) { d.erase("device"); }, "missing field \"device\""},
      {"missing latency", [](Json& d) { d["inter_node"].erase("latency"); },
       "inter_node: missing field \"latency\""},
      {"string count", [](Json& d) { d["devices_per_node"] = "8"; },
       "devices_per_node: expected an integer, got \"8\""},
      {"fractional count", [](Json& d) { d["devices_per_node"] = 8.5; },
       "devices_per_node: expected an integer, got 8.5"},
      {"zero devices", [](Json& d) { d["devices_per_node"] = 0; },
       "devices_per_node: got 0; allowed: 1 to 1000000"},
      {"absurd nodes", [](Json& d) { d["nodes"] = 2000000; }, "nodes: got 2000000; allowed: 1 to"},
      {"absurd total", [](Json& d) { d["nodes"] = 1000; d["devices_per_node"] = 8000; },
       "nodes: 1000 nodes of 8000 devices is more than 1000000 devices"},
      {"partial out of range", [](Json& d) { d["nodes"] = 2; d["devices"] = 17; },
       "devices: got 17; allowed: 9 to 16"},
      {"negative memory", [](Json& d) { d["device"]["memory_bytes"] = -1; },
       "device.memory_bytes: got -1; allowed: 1 to"},
      {"zero bandwidth", [](Json& d) { d["device"]["memory_bandwidth"] = 0; },
       "device.memory_bandwidth: got 0; allowed: > 0"},
      {"zero link", [](Json& d) { d["intra_node"]["bandwidth"] = 0; },
       "intra_node.bandwidth: got 0; allowed: > 0"},
      {"negative latency", [](Json& d) { d["inter_node"]["latency"] = -1e-6; },
       "inter_node.latency: got -1e-06; allowed: >= 0"},
      {"absurd flops", [](Json& d) { d["device"]["peak_flops"]["f32"] = 1e30; },
       "device.peak_flops.f32: got 1e+30; allowed: > 0 and <= 1e+18"},
      {"negative price", [](Json& d) { d["price_per_device_hour"] = -3; },
       "price_per_device_hour: got -3; allowed: >= 0"},
      {"link not object", [](Json& d) { d["inter_node"] = 5; },
       "inter_node: expected an object, got 5"},
      {"unknown top field", [](Json& d) { d["colour"] = "blue"; },
       "unknown field \"colour\"; expected one of \"name\", \"devices_per_node\", \"nodes\", "
       "\"devices\""},
      {"unknown dtype", [](Json& d) { d["device"]["peak_flops"]["fp8"] = 1; },
       "device.peak_flops: unknown field \"fp8\"; expected one of \"f32\", \"f16\", \"bf16\""},
      {"empty name", [](Json& d) { d["name"] = ""; }, "name: expected a non-empty string"},
      {"numeric device name", [](Json& d) { d["device"]["name"] = 7; },
       "device.name: expected a string, got 7"},
      {"not an object", [](Json& d) { d = Json::array({1, 2}); }, "expected an object, got an array"},
  };
  const Json good = Json::parse(ClusterToJson(*ClusterPreset("v100-vpc32")));
  for (const BadCase& c : cases) {
    Json doc = good;
    c.mutate(doc);
    absl::StatusOr<ClusterSpec> r = ClusterFromJson(doc.dump(), "my.json");
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.status().message().find(std::string("my.json: ") + c.expected), std::string::npos)
        << c.what << ": " << r.status();
  }
}

TEST(ClusterJsonTest, GarbageIsAnErrorNotACrash) {
  for (const std::string text : {std::string(""), std::string("nul"), std::string(100000, '['),
                                 std::string("{\"name\": \"x\"} trailing"), std::string("\xff\xfe")}) {
    absl::StatusOr<ClusterSpec> r = ClusterFromJson(text, "junk.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message().rfind("junk.json: ", 0), 0u) << r.status();
  }
}

}  // namespace
}  // namespace tessera::costmodel
