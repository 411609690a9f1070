// Alpha-beta collective costs. Notation: P devices in the group on N nodes,
// S bytes, a latency (s per message), b bandwidth (bytes/s, one direction).
// Intra-node bandwidth is per device; inter-node bandwidth is per node, shared
// by the node's devices.
#include "tessera/costmodel/collective_cost.h"

#include <algorithm>
#include <cmath>

#include "tessera/base/check.h"

namespace tessera::costmodel {
namespace {

// ceil(log2(p)) for p >= 1: the rounds of a binomial tree.
int TreeRounds(int p) {
  int rounds = 0;
  while ((1 << rounds) < p) ++rounds;
  return rounds;
}

// The link a flat ring (or any algorithm treating the group as one) runs at:
// inside one node the device's own link; across nodes the slowest link sets the
// pace (b = min of the two bandwidths) and the largest latency every step. A
// ring placed node by node crosses each node's inter-node link once per
// direction, so it gets the whole of that link.
LinkSpec RingLink(const GroupPlacement& g, const ClusterSpec& c) {
  if (g.nodes <= 1) return c.intra_node;
  return {.bandwidth = std::min(c.intra_node.bandwidth, c.inter_node.bandwidth),
          .latency = std::max(c.intra_node.latency, c.inter_node.latency)};
}

// Reduce-scatter (or all-gather, its mirror) around a ring of p members over
// `link`: p - 1 steps, each moving S/p bytes per member:
//   (p-1) a + (p-1)/p * S/b.
double RingHalf(double bytes, int p, const LinkSpec& link) {
  if (p <= 1) return 0;
  return (p - 1) * link.latency + (p - 1) / static_cast<double>(p) * bytes / link.bandwidth;
}

// Broadcast: the cheaper of
//   a binomial tree,  ceil(log2 P) (a + S/b)       (small messages), and
//   scatter + ring all-gather (van de Geijn),
//     ceil(log2 P) a + (P-1)/P S/b  +  (P-1) a + (P-1)/P S/b   (large messages).
double BroadcastSeconds(double bytes, const GroupPlacement& g, const ClusterSpec& c) {
  const LinkSpec link = RingLink(g, c);
  const int rounds = TreeRounds(g.devices);
  const double tree = rounds * (link.latency + bytes / link.bandwidth);
  const double scatter = rounds * link.latency +
                         (g.devices - 1) / static_cast<double>(g.devices) * bytes / link.bandwidth;
  return std::min(tree, scatter + RingHalf(bytes, g.devices, link));
}

// All-to-all, S = the bytes each device exchanges (1/P of them stay local).
// Pairwise exchange in P - 1 steps: (P-1) a + (P-1)/P S/b on one node. Across
// nodes every step pays the larger latency, and the traffic is bound by the
// busier of (a) each device's own link, carrying its (P-1)/P S, and (b) each
// node's inter-node link, carrying k (P-k)/P S for its k devices (the bisection):
//   (P-1) a_max + max((P-1)/P S/b_intra, max_node k (P-k)/P S/b_inter).
double AllToAllSeconds(double bytes, const GroupPlacement& g, const ClusterSpec& c) {
  const double p = g.devices;
  const double device_link = (p - 1) / p * bytes / c.intra_node.bandwidth;
  if (g.nodes <= 1) return (p - 1) * c.intra_node.latency + device_link;
  const double node_link = g.max_cross_pairs / p * bytes / c.inter_node.bandwidth;
  return (p - 1) * RingLink(g, c).latency + std::max(device_link, node_link);
}

bool IsRingCollective(Collective kind) {
  return kind == Collective::kAllReduce || kind == Collective::kReduceScatter ||
         kind == Collective::kAllGather;
}

}  // namespace

namespace {

// One occupied node holding k of the group's devices.
void AddNode(GroupPlacement& g, int k) {
  ++g.nodes;
  g.max_per_node = std::max(g.max_per_node, k);
  g.min_per_node = std::min(g.min_per_node, k);
  g.max_cross_pairs = std::max(g.max_cross_pairs, static_cast<double>(k) * (g.devices - k));
}

// Whether the ids are first, first + 1, ...: the planners' groups (0..P-1), placed node by node
// without sorting a copy (the planners ask for thousands of collectives).
bool IsRun(const std::vector<int>& ids) {
  for (size_t i = 1; i < ids.size(); ++i) {
    if (ids[i] != ids[0] + static_cast<int>(i)) return false;
  }
  return true;
}

}  // namespace

GroupPlacement PlaceGroup(const std::vector<int>& devices, const ClusterSpec& cluster) {
  GroupPlacement g;
  g.devices = static_cast<int>(devices.size());
  if (devices.empty()) return g;
  g.min_per_node = g.devices;
  if (IsRun(devices)) {
    const int first = devices.front(), last = devices.back();
    TS_CHECK(first >= 0 && last < cluster.devices())
        << "device ids " << first << ".." << last << " outside cluster '" << cluster.name
        << "' of " << cluster.devices() << " devices";
    const int per_node = cluster.devices_per_node;
    for (int node = cluster.NodeOf(first); node <= cluster.NodeOf(last); ++node) {
      AddNode(g, std::min(last, (node + 1) * per_node - 1) - std::max(first, node * per_node) + 1);
    }
    return g;
  }
  std::vector<int> ids = devices;
  if (!std::is_sorted(ids.begin(), ids.end())) std::sort(ids.begin(), ids.end());
  TS_CHECK(ids.front() >= 0 && ids.back() < cluster.devices())
      << "device ids " << ids.front() << ".." << ids.back() << " outside cluster '"
      << cluster.name << "' of " << cluster.devices() << " devices";
  // Devices are on nodes in order, so sorted ids visit each node's devices in one run.
  for (size_t start = 0; start < ids.size();) {
    const int node = cluster.NodeOf(ids[start]);
    size_t end = start + 1;
    while (end < ids.size() && cluster.NodeOf(ids[end]) == node) {
      TS_CHECK(ids[end] != ids[end - 1]) << "device " << ids[end] << " listed twice";
      ++end;
    }
    AddNode(g, static_cast<int>(end - start));
    start = end;
  }
  return g;
}

absl::string_view CollectiveName(Collective kind) {
  switch (kind) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kAllToAll: return "all_to_all";
  }
  return "unknown";
}

// Ring all-reduce = reduce-scatter + all-gather: 2(P-1) a + 2(P-1)/P S/b.
double FlatRingSeconds(Collective kind, double bytes, const GroupPlacement& group,
                       const ClusterSpec& cluster) {
  TS_CHECK(IsRingCollective(kind)) << CollectiveName(kind) << " has no ring form here";
  const double half = RingHalf(bytes, group.devices, RingLink(group, cluster));
  return kind == Collective::kAllReduce ? 2 * half : half;
}

// Hierarchical reduce-scatter, step by step (all-gather runs the same steps in
// reverse order, all-reduce is the two back to back):
//   step 1: reduce-scatter inside each node over its k devices (NVLink/PCIe):
//           (k-1) a_intra + (k-1)/k S/b_intra; the largest node (k = max) sets the pace.
//   step 2: k rings across the N nodes, one per local rank, each reduce-scattering
//           its S/k shard; the k streams share the node's inter-node link (b_inter/k
//           each) and each is also bound by its device's own link (b_intra):
//           (N-1) a_inter + (N-1)/N * (S/k) / min(b_intra, b_inter/k)
//         = (N-1) a_inter + (N-1)/N * S / min(k b_intra, b_inter).
//           With uneven nodes the node with the fewest devices (k = min) carries
//           the largest shards and sets the pace.
double HierarchicalSeconds(Collective kind, double bytes, const GroupPlacement& group,
                           const ClusterSpec& cluster) {
  TS_CHECK(IsRingCollective(kind)) << CollectiveName(kind) << " has no hierarchical form here";
  if (group.nodes <= 1) return FlatRingSeconds(kind, bytes, group, cluster);
  const double inside = RingHalf(bytes, group.max_per_node, cluster.intra_node);
  const double k = group.min_per_node;
  const LinkSpec across = {
      .bandwidth = std::min(k * cluster.intra_node.bandwidth, cluster.inter_node.bandwidth),
      .latency = cluster.inter_node.latency};
  const double half = inside + RingHalf(bytes, group.nodes, across);
  return kind == Collective::kAllReduce ? 2 * half : half;
}

double CollectiveSeconds(Collective kind, double bytes, const std::vector<int>& devices,
                         const ClusterSpec& cluster) {
  TS_CHECK(bytes >= 0 && std::isfinite(bytes)) << "collective of " << bytes << " bytes";
  if (devices.size() <= 1 || bytes == 0) return 0;
  const GroupPlacement group = PlaceGroup(devices, cluster);
  switch (kind) {
    case Collective::kBroadcast: return BroadcastSeconds(bytes, group, cluster);
    case Collective::kAllToAll: return AllToAllSeconds(bytes, group, cluster);
    default:
      return std::min(FlatRingSeconds(kind, bytes, group, cluster),
                      HierarchicalSeconds(kind, bytes, group, cluster));
  }
}

}  // namespace tessera::costmodel
