// The roofline cost model: an op takes the longer of its compute time at a
// fraction of peak FLOP/s and its memory time at a fraction of memory
// bandwidth, plus a fixed launch overhead; collectives use collective_cost.h.
//
//   ClusterSpec cluster = ClusterPreset("v100-vpc32")->WithDevices(64);
//   RooflineCostModel model(cluster);   // cluster.efficiency, else Efficiency{} (docs/clusters.md)
//   model.OpTime({.flops = 2e12, .bytes = 1e9, .op_class = graph::OpClass::kDense,
//                 .dtype = graph::DType::kF16});   // 2e12 / (0.7 * 125e12) + 5e-6 s
//   Efficiency e;  e.flops[Efficiency::Index(graph::OpClass::kDense)] = 0.5;
//   RooflineCostModel calibrated(cluster, e);
#pragma once

#include <vector>

#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/cost_model.h"
#include "tessera/costmodel/efficiency.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

class RooflineCostModel : public CostModel {
 public:
  // `cluster` is the planned one (e.g. preset.WithDevices(P)). The one-argument
  // form uses the cluster's own efficiency (a calibrated cluster file's) or the
  // Efficiency{} defaults; the two-argument form uses `efficiency`. Either must
  // be valid (Validate()).
  explicit RooflineCostModel(ClusterSpec cluster);
  RooflineCostModel(ClusterSpec cluster, Efficiency efficiency);

  // max(flops / (peak(dtype) * flops[class] * s), bytes / (bandwidth * bandwidth[class]))
  // + op_overhead_s, s = winograd_speedup for Winograd convolutions, else 1; 0 for no work.
  double OpTime(const OpWork& work) const override;
  // CollectiveSeconds(kind, bytes, devices, cluster()).
  double CollectiveTime(Collective kind, double bytes,
                        const std::vector<int>& devices) const override;
  // efficiency().overlap_slowdown.
  double OverlapSlowdown() const override { return efficiency_.overlap_slowdown; }

  const ClusterSpec& cluster() const { return cluster_; }
  const Efficiency& efficiency() const { return efficiency_; }

 private:
  ClusterSpec cluster_;
  Efficiency efficiency_;
};

}  // namespace tessera::costmodel
