// Collective costs in alpha-beta terms (a: seconds per message, b: bytes/s),
// pure functions of (collective, bytes, device group, cluster). Formulas and
// their derivation: docs/clusters.md and collective_cost.cc.
//
//   ClusterSpec c = ClusterPreset("v100-vpc32")->WithDevices(16);
//   double t = CollectiveSeconds(Collective::kAllReduce, 100e6, {0, 1, ..., 15}, c);
//   // the cheaper of a flat ring (bound by the 4 GB/s VPC link) and the
//   // hierarchical form (NVLink inside nodes, 8 streams sharing the VPC link across)
//   GroupPlacement g = PlaceGroup({0, 1, 8, 9}, c);   // 4 devices on 2 nodes, 2 per node
#pragma once

#include <vector>

#include "absl/strings/string_view.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/cost_model.h"

namespace tessera::costmodel {

// How a group of devices sits on the cluster's nodes.
struct GroupPlacement {
  int devices = 0;       // P
  int nodes = 0;         // N: nodes holding at least one of the devices
  int max_per_node = 0;  // most group devices on one node
  int min_per_node = 0;  // fewest group devices on one (occupied) node
  // max over occupied nodes of k * (P - k), k that node's group devices: the
  // pairs whose all-to-all traffic crosses that node's inter-node link.
  double max_cross_pairs = 0;
};

// The placement of `devices` (distinct ids in [0, cluster.devices()); any order).
GroupPlacement PlaceGroup(const std::vector<int>& devices, const ClusterSpec& cluster);

// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all".
absl::string_view CollectiveName(Collective kind);

// Seconds for `kind` over `bytes` (as CostModel::CollectiveTime defines them)
// among `devices`: 0 for one device or no bytes; all-reduce, reduce-scatter and
// all-gather take the cheaper of FlatRingSeconds and HierarchicalSeconds.
double CollectiveSeconds(Collective kind, double bytes, const std::vector<int>& devices,
                         const ClusterSpec& cluster);

// One ring through all the group's devices, node by node, bound by its slowest
// link. kind: all-reduce, reduce-scatter or all-gather.
double FlatRingSeconds(Collective kind, double bytes, const GroupPlacement& group,
                       const ClusterSpec& cluster);
// Inside nodes, then across nodes (equals FlatRingSeconds on one node).
// kind: all-reduce, reduce-scatter or all-gather.
double HierarchicalSeconds(Collective kind, double bytes, const GroupPlacement& group,
                           const ClusterSpec& cluster);

}  // namespace tessera::costmodel
