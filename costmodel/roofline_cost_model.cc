// RooflineCostModel: per-op roofline time and alpha-beta collectives.
#include "tessera/costmodel/roofline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tessera/base/check.h"
#include "tessera/costmodel/collective_cost.h"

namespace tessera::costmodel {

RooflineCostModel::RooflineCostModel(ClusterSpec cluster)
    : RooflineCostModel(cluster, cluster.efficiency.value_or(Efficiency{})) {}

RooflineCostModel::RooflineCostModel(ClusterSpec cluster, Efficiency efficiency)
    : cluster_(std::move(cluster)), efficiency_(std::move(efficiency)) {
  const absl::Status valid = efficiency_.Validate();
  TS_CHECK(valid.ok()) << valid.message();
  TS_CHECK(cluster_.device.peak_flops_f32 > 0 && cluster_.device.memory_bandwidth > 0)
      << "cluster '" << cluster_.name << "' has no peak FLOP/s or memory bandwidth";
}

double RooflineCostModel::OpTime(const OpWork& work) const {
  TS_CHECK(work.flops >= 0 && work.bytes >= 0 && std::isfinite(work.flops) &&
           std::isfinite(work.bytes))
      << "op work of " << work.flops << " FLOPs, " << work.bytes << " bytes";
  if (work.flops == 0 && work.bytes == 0) return 0;
  if (work.kind == WorkKind::kBackward && work.flops == 0) return 0;  // nothing to differentiate
  const int c = Efficiency::Index(work.op_class);
  TS_CHECK(c >= 0 && c < kOpClassCount) << "op class " << c;
  const double speedup = work.winograd ? efficiency_.winograd_speedup : 1;
  const double compute =
      work.flops / (cluster_.device.peak_flops(work.dtype) * efficiency_.flops[c] * speedup);
  const double memory =
      work.bytes / (cluster_.device.memory_bandwidth * efficiency_.bandwidth[c]);
  return std::max(compute, memory) + efficiency_.op_overhead_s;
}

double RooflineCostModel::CollectiveTime(Collective kind, double bytes,
                                         const std::vector<int>& devices) const {
  return CollectiveSeconds(kind, bytes, devices, cluster_);
}

}  // namespace tessera::costmodel
