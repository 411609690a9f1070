// Cluster presets: the documented figures, placement of devices on nodes, and
// the figures' sources in docs/clusters.md.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

using graph::DType;
constexpr int64_t kGiB = int64_t{1} << 30;

ClusterSpec Preset(const std::string& name) {
  absl::StatusOr<ClusterSpec> c = LoadCluster(name);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : ClusterSpec{};
}

TEST(ClusterPresetTest, NamesAndUnknownPreset) {
  EXPECT_EQ(ClusterPresetNames(),
            (std::vector<std::string>{"m40-pcie", "v100-vpc32", "v100-ib100", "h100-dgx"}));
  absl::StatusOr<ClusterSpec> bad = ClusterPreset("v100");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  for (const std::string& n : ClusterPresetNames())
    EXPECT_NE(bad.status().message().find(n), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("\"v100\""), std::string::npos);
}

TEST(ClusterPresetTest, M40Pcie) {
  const ClusterSpec c = Preset("m40-pcie");
  EXPECT_EQ(c.name, "m40-pcie");
  EXPECT_EQ(c.devices_per_node, 4);
  EXPECT_EQ(c.devices(), 1024);
  EXPECT_EQ(c.device.peak_flops(DType::kF32), 7e12);
  EXPECT_EQ(c.device.peak_flops(DType::kF16), 7e12);   // no fast f16 on Maxwell
  EXPECT_EQ(c.device.peak_flops(DType::kBF16), 7e12);  // unsupported: the f32 figure
  EXPECT_EQ(c.device.memory_bytes, 12 * kGiB);
  EXPECT_EQ(c.device.memory_bandwidth, 288e9);
  EXPECT_EQ(c.intra_node.bandwidth, 12e9);
  EXPECT_EQ(c.intra_node.latency, 10e-6);
  EXPECT_EQ(c.inter_node.bandwidth, 1.25e9);
  EXPECT_EQ(c.inter_node.latency, 50e-6);
  EXPECT_DOUBLE_EQ(c.price_per_device_hour, 0.90);
  EXPECT_NE(c.source.find("M40 data sheet"), std::string::npos);
}

TEST(ClusterPresetTest, V100Vpc32AndIb100ShareNodes) {
  const ClusterSpec vpc = Preset("v100-vpc32");
  const ClusterSpec ib = Preset("v100-ib100");
  for (const ClusterSpec& c : {vpc, ib}) {
    EXPECT_EQ(c.devices_per_node, 8);
    EXPECT_EQ(c.nodes, 128);
    EXPECT_EQ(c.device.name, "V100-SXM2-16GB");
    EXPECT_EQ(c.device.peak_flops(DType::kF32), 15.7e12);
    EXPECT_EQ(c.device.peak_flops(DType::kF16), 125e12);
    EXPECT_EQ(c.device.peak_flops(DType::kBF16), 15.7e12);  // Volta: no bf16
    EXPECT_EQ(c.device.peak_flops(DType::kI32), 15.7e12);
    EXPECT_EQ(c.device.memory_bytes, 16 * kGiB);
    EXPECT_EQ(c.device.memory_bandwidth, 900e9);
    EXPECT_EQ(c.intra_node.bandwidth, 150e9);
    EXPECT_EQ(c.intra_node.latency, 3e-6);
  }
  EXPECT_EQ(vpc.inter_node.bandwidth, 4e9);  // 32 Gbit/s
  EXPECT_EQ(vpc.inter_node.latency, 40e-6);
  EXPECT_DOUBLE_EQ(vpc.price_per_device_hour, 3.06);  // $24.48/h per 8 GPUs
  EXPECT_EQ(ib.inter_node.bandwidth, 12.5e9);  // 100 Gbit/s
  EXPECT_EQ(ib.inter_node.latency, 2e-6);
  EXPECT_DOUBLE_EQ(ib.price_per_device_hour, 3.9015);  // p3dn.24xlarge $31.212/h per 8
  EXPECT_NE(vpc.source.find("p3.16xlarge"), std::string::npos);
  EXPECT_NE(ib.source.find("InfiniBand"), std::string::npos);
}

TEST(ClusterPresetTest, H100Dgx) {
  const ClusterSpec c = Preset("h100-dgx");
  EXPECT_EQ(c.devices_per_node, 8);
  EXPECT_EQ(c.device.peak_flops(DType::kF32), 67e12);
  EXPECT_EQ(c.device.peak_flops(DType::kF16), 989e12);
  EXPECT_EQ(c.device.peak_flops(DType::kBF16), 989e12);
  EXPECT_EQ(c.device.memory_bytes, 80 * kGiB);
  EXPECT_EQ(c.device.memory_bandwidth, 3.35e12);
  EXPECT_EQ(c.intra_node.bandwidth, 450e9);
  EXPECT_EQ(c.inter_node.bandwidth, 400e9);  // 8 x 400 Gbit/s
  EXPECT_DOUBLE_EQ(c.price_per_device_hour, 12.29);  // p5.48xlarge $98.32/h per 8
  EXPECT_NE(c.source.find("p5.48xlarge"), std::string::npos);
}

TEST(ClusterPlacementTest, FullNodesInOrder) {
  const ClusterSpec c = Preset("v100-vpc32").WithDevices(64);
  EXPECT_EQ(c.devices_per_node, 8);
  EXPECT_EQ(c.nodes, 8);
  EXPECT_EQ(c.devices(), 64);
  EXPECT_EQ(c.partial_devices, 0);
  EXPECT_EQ(c.NodeOf(0), 0);
  EXPECT_EQ(c.NodeOf(7), 0);
  EXPECT_EQ(c.NodeOf(8), 1);
  EXPECT_EQ(c.NodeOf(17), 2);
  EXPECT_EQ(c.NodeOf(63), 7);
  EXPECT_EQ(c.device, Preset("v100-vpc32").device);  // same hardware
}

TEST(ClusterPlacementTest, FewerDevicesThanANodeIsOneNode) {
  const ClusterSpec c = Preset("v100-vpc32").WithDevices(3);
  EXPECT_EQ(c.devices_per_node, 3);
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.devices(), 3);
  EXPECT_EQ(c.NodeOf(2), 0);
  EXPECT_EQ(Preset("h100-dgx").WithDevices(1).devices(), 1);
}

TEST(ClusterPlacementTest, PartialLastNode) {
  const ClusterSpec c = Preset("v100-vpc32").WithDevices(12);
  EXPECT_EQ(c.devices_per_node, 8);
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.devices(), 12);
  EXPECT_EQ(c.NodeOf(7), 0);
  EXPECT_EQ(c.NodeOf(8), 1);
  EXPECT_EQ(c.NodeOf(11), 1);
  const ClusterSpec m40 = Preset("m40-pcie").WithDevices(10);  // 4 + 4 + 2
  EXPECT_EQ(m40.nodes, 3);
  EXPECT_EQ(m40.devices(), 10);
  EXPECT_EQ(m40.NodeOf(9), 2);
  // Resizing a partial cluster to full nodes clears the partial count.
  const ClusterSpec full = c.WithDevices(16);
  EXPECT_EQ(full.nodes, 2);
  EXPECT_EQ(full.partial_devices, 0);
  EXPECT_EQ(full.devices(), 16);
}

TEST(ClusterPlacementTest, MayGrowPastThePresetSize) {
  const ClusterSpec c = Preset("h100-dgx").WithDevices(2050);
  EXPECT_EQ(c.nodes, 257);
  EXPECT_EQ(c.devices(), 2050);
  EXPECT_EQ(c.NodeOf(2049), 256);
}

std::string ReadDoc() {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/docs/clusters.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ClusterDocTest, EveryPresetAndPriceIsDocumented) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty());
  for (const std::string& n : ClusterPresetNames()) EXPECT_NE(doc.find("`" + n + "`"), std::string::npos) << n;
  for (const char* figure : {"24.48", "31.212", "98.32", "0.90", "15.7", "125", "989", "3.35",
                             "288", "450", "400 Gbit/s", "32 Gbit/s", "100 Gbit/s", "10 Gbit/s"})
    EXPECT_NE(doc.find(figure), std::string::npos) << figure;
}

TEST(ClusterDocTest, ExampleFileInTheDocParses) {
  const std::string doc = ReadDoc();
  const size_t start = doc.find("```json\n");
  ASSERT_NE(start, std::string::npos);
  const size_t end = doc.find("```", start + 8);
  ASSERT_NE(end, std::string::npos);
  absl::StatusOr<ClusterSpec> c = ClusterFromJson(doc.substr(start + 8, end - start - 8), "doc");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "my-a100-cluster");
  EXPECT_EQ(c->devices(), 32);
  EXPECT_EQ(c->device.peak_flops(DType::kBF16), 312e12);
}

}  // namespace
}  // namespace tessera::costmodel
