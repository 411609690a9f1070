// Alpha-beta collective costs against hand-computed values: one node, several
// nodes (flat ring bound by the slowest link vs hierarchical), uneven nodes,
// and the trivial cases.
#include "tessera/costmodel/collective_cost.h"

#include <gtest/gtest.h>

#include <numeric>

#include "tessera/costmodel/roofline_cost_model.h"

namespace tessera::costmodel {
namespace {

// 4 nodes of 4 devices; links: 100 GB/s, 1 us inside nodes; 10 GB/s, 10 us between.
ClusterSpec TestCluster() {
  ClusterSpec c;
  c.name = "test";
  c.devices_per_node = 4;
  c.nodes = 4;
  c.device = {.name = "d", .peak_flops_f32 = 1e12, .memory_bytes = 1 << 30, .memory_bandwidth = 1e11};
  c.intra_node = {.bandwidth = 100e9, .latency = 1e-6};
  c.inter_node = {.bandwidth = 10e9, .latency = 10e-6};
  return c;
}

std::vector<int> Range(int begin, int end) {
  std::vector<int> v(end - begin);
  std::iota(v.begin(), v.end(), begin);
  return v;
}

constexpr double kS = 1e9;  // bytes

TEST(CollectiveCostTest, OneDeviceOrNoBytesCostsNothing) {
  const ClusterSpec c = TestCluster();
  for (Collective k : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kBroadcast, Collective::kAllToAll}) {
    EXPECT_EQ(CollectiveSeconds(k, kS, {5}, c), 0) << CollectiveName(k);
    EXPECT_EQ(CollectiveSeconds(k, 0, Range(0, 16), c), 0) << CollectiveName(k);
    EXPECT_EQ(CollectiveSeconds(k, kS, {}, c), 0) << CollectiveName(k);
  }
}

TEST(CollectiveCostTest, SingleNodeRing) {
  const ClusterSpec c = TestCluster();
  const std::vector<int> g = Range(0, 4);
  // 2(P-1) a + 2(P-1)/P S/b = 6 us + 1.5 * 1e9 / 1e11.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, kS, g, c), 6e-6 + 0.015);
  // (P-1) a + (P-1)/P S/b.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kReduceScatter, kS, g, c), 3e-6 + 0.0075);
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllGather, kS, g, c), 3e-6 + 0.0075);
  // All-to-all: (P-1) a + (P-1)/P S/b.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllToAll, kS, g, c), 3e-6 + 0.0075);
  // On one node the hierarchical form is the flat ring.
  const GroupPlacement p = PlaceGroup(g, c);
  EXPECT_EQ(HierarchicalSeconds(Collective::kAllReduce, kS, p, c),
            FlatRingSeconds(Collective::kAllReduce, kS, p, c));
}

TEST(CollectiveCostTest, BroadcastTreeForSmallScatterAllGatherForLarge) {
  const ClusterSpec c = TestCluster();
  const std::vector<int> g = Range(0, 4);
  // Large: scatter 2 a + 3/4 S/b, then ring all-gather 3 a + 3/4 S/b
  // (the tree would take 2 (a + S/b) = 0.020002 s).
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kBroadcast, kS, g, c), 5e-6 + 0.015);
  // Small (100 bytes): tree 2 (a + S/b) beats 5 a + 1.5 S/b.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kBroadcast, 100, g, c), 2 * (1e-6 + 1e-9));
}

TEST(CollectiveCostTest, PlacementCountsNodes) {
  const ClusterSpec c = TestCluster();
  const GroupPlacement p = PlaceGroup({9, 0, 1, 2, 3, 8}, c);  // any order
  EXPECT_EQ(p.devices, 6);
  EXPECT_EQ(p.nodes, 2);
  EXPECT_EQ(p.max_per_node, 4);
  EXPECT_EQ(p.min_per_node, 2);
  EXPECT_EQ(p.max_cross_pairs, 8);  // 4 * 2 on either node
}

// A run of consecutive ids (the planners' groups) is placed without sorting; the same ids in
// another order take the general path: both agree, runs starting and ending mid-node included.
TEST(CollectiveCostTest, RunsArePlacedAsTheSameIdsInAnyOrder) {
  const ClusterSpec c = TestCluster();
  for (const auto& [begin, end] : {std::pair{0, 16}, std::pair{2, 11}, std::pair{5, 7},
                                   std::pair{4, 8}, std::pair{13, 14}}) {
    std::vector<int> run = Range(begin, end), reversed(run.rbegin(), run.rend());
    const GroupPlacement a = PlaceGroup(run, c), b = PlaceGroup(reversed, c);
    EXPECT_EQ(a.devices, b.devices) << begin << ".." << end;
    EXPECT_EQ(a.nodes, b.nodes) << begin << ".." << end;
    EXPECT_EQ(a.max_per_node, b.max_per_node) << begin << ".." << end;
    EXPECT_EQ(a.min_per_node, b.min_per_node) << begin << ".." << end;
    EXPECT_EQ(a.max_cross_pairs, b.max_cross_pairs) << begin << ".." << end;
  }
  const GroupPlacement p = PlaceGroup(Range(2, 11), c);  // 2 + 4 + 3 devices on nodes 0, 1, 2
  EXPECT_EQ(p.nodes, 3);
  EXPECT_EQ(p.max_per_node, 4);
  EXPECT_EQ(p.min_per_node, 2);
  EXPECT_EQ(p.max_cross_pairs, 4 * 5);
}

TEST(CollectiveCostTest, TwoNodesHierarchicalBeatsFlatRing) {
  const ClusterSpec c = TestCluster();
  const std::vector<int> g = Range(0, 8);
  const GroupPlacement p = PlaceGroup(g, c);
  // Flat: the ring crosses nodes, so b = min(100, 10) GB/s and a = max(1, 10) us:
  // 2*7*10 us + 2*7/8 * 1e9 / 1e10.
  const double flat = 2 * 7 * 10e-6 + 2 * 7.0 / 8 * 0.1;
  EXPECT_DOUBLE_EQ(FlatRingSeconds(Collective::kAllReduce, kS, p, c), flat);
  // Hierarchical, per half: inside (k=4) 3 us + 3/4 * 1e9/1e11; across (N=2)
  // 10 us + 1/2 * 1e9 / min(4 * 1e11, 1e10).
  const double half = (3e-6 + 0.0075) + (10e-6 + 0.05);
  EXPECT_DOUBLE_EQ(HierarchicalSeconds(Collective::kAllReduce, kS, p, c), 2 * half);
  EXPECT_DOUBLE_EQ(HierarchicalSeconds(Collective::kReduceScatter, kS, p, c), half);
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, kS, g, c), 2 * half);
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllGather, kS, g, c), half);
  EXPECT_LT(2 * half, flat);
}

TEST(CollectiveCostTest, FlatRingWinsWhenAllLinksAreEqual) {
  ClusterSpec c = TestCluster();
  c.intra_node = {.bandwidth = 10e9, .latency = 1e-6};
  c.inter_node = {.bandwidth = 10e9, .latency = 1e-6};
  const std::vector<int> g = Range(0, 8);
  // Flat: 14 a + 1.75 S/b; hierarchical: 2 * [(3 a + 0.75 S/b) + (a + 0.5 S/b)].
  const double flat = 14e-6 + 1.75 * 0.1;
  EXPECT_DOUBLE_EQ(HierarchicalSeconds(Collective::kAllReduce, kS, PlaceGroup(g, c), c),
                   8e-6 + 2.5 * 0.1);
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, kS, g, c), flat);
}

TEST(CollectiveCostTest, RingAcrossTwoNodesIsBoundByTheSlowestLink) {
  const ClusterSpec c = TestCluster();
  // Devices 3 and 4 sit on nodes 0 and 1: one inter-node hop each way.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, kS, {3, 4}, c),
                   2 * 10e-6 + 2 * 0.5 * kS / 10e9);
  // Devices 0 and 1 share node 0: the NVLink-like link.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, kS, {0, 1}, c),
                   2 * 1e-6 + 2 * 0.5 * kS / 100e9);
}

TEST(CollectiveCostTest, UnevenNodesUseTheFullestInsideAndTheEmptiestAcross) {
  ClusterSpec c = TestCluster();
  c.inter_node.bandwidth = 1000e9;  // fast enough that the lone device's own link binds
  const std::vector<int> g = Range(0, 5);  // node 0: 4 devices, node 1: 1 device
  // Inside: k = 4: 3 us + 3/4 * 1e9 / 1e11. Across: N = 2, k = 1:
  // 10 us + 1/2 * 1e9 / min(1 * 1e11, 1e12).
  const double half = (3e-6 + 0.0075) + (10e-6 + 0.005);
  EXPECT_DOUBLE_EQ(HierarchicalSeconds(Collective::kAllReduce, kS, PlaceGroup(g, c), c), 2 * half);
  // Flat: 2*4*10 us + 2*4/5 * 1e9 / 1e11 (the intra link is now the slowest).
  EXPECT_DOUBLE_EQ(FlatRingSeconds(Collective::kAllReduce, kS, PlaceGroup(g, c), c),
                   8 * 10e-6 + 1.6 * 0.01);
}

TEST(CollectiveCostTest, AllToAllAcrossNodesSharesTheNodeLink) {
  const ClusterSpec c = TestCluster();
  // P = 8 on 2 nodes of 4: latency 7 * 10 us; each node link carries
  // 4 * 4 / 8 * S = 2 GB at 10 GB/s; each device link 7/8 GB at 100 GB/s.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllToAll, kS, Range(0, 8), c), 70e-6 + 0.2);
  // All 16 devices: each node link carries 4 * 12 / 16 * S = 3 GB.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllToAll, kS, Range(0, 16), c), 150e-6 + 0.3);
}

TEST(CollectiveCostTest, V100Vpc32At64DevicesIsHierarchical) {
  const ClusterSpec c = ClusterPreset("v100-vpc32")->WithDevices(64);
  const double s = 100e6;
  // Inside 8 devices on NVLink: 7 * 3 us + 7/8 * S / 150e9; across 8 nodes:
  // 7 * 40 us + 7/8 * S / min(8 * 150e9, 4e9).
  const double half = (7 * 3e-6 + 7.0 / 8 * s / 150e9) + (7 * 40e-6 + 7.0 / 8 * s / 4e9);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, s, Range(0, 64), c), 2 * half, 1e-12);
  // The flat ring would pay 126 steps of 40 us and the same 4 GB/s.
  const double flat = 126 * 40e-6 + 2 * 63.0 / 64 * s / 4e9;
  EXPECT_GT(flat, 2 * half);
}

TEST(CollectiveCostTest, RooflineCostModelDelegates) {
  const ClusterSpec c = TestCluster();
  const RooflineCostModel model(c);
  const CostModel& m = model;
  for (Collective k : {Collective::kAllReduce, Collective::kBroadcast, Collective::kAllToAll}) {
    EXPECT_EQ(m.CollectiveTime(k, kS, Range(0, 8)), CollectiveSeconds(k, kS, Range(0, 8), c));
  }
  EXPECT_EQ(CollectiveName(Collective::kReduceScatter), "reduce_scatter");
}

}  // namespace
}  // namespace tessera::costmodel
