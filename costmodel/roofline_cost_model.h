// The roofline cost model: an op takes the longer of its compute time at a
// fraction of peak FLOP/s and its memory time at a fraction of memory
// bandwidth, plus a fixed launch overhead; collectives use collective_cost.h.
//
//   ClusterSpec cluster = ClusterPreset("v100-vpc32")->WithDevices(64);
//   RooflineCostModel model(cluster);   // Efficiency{} defaults (docs/clusters.md)
//   model.OpTime({.flops = 2e12, .bytes = 1e9, .op_class = graph::OpClass::kDense,
//                 .dtype = graph::DType::kF16});   // 2e12 / (0.7 * 125e12) + 5e-6 s
//   Efficiency e;  e.flops[Efficiency::Index(graph::OpClass::kDense)] = 0.5;
//   RooflineCostModel calibrated(cluster, e);
#pragma once

#include <array>
#include <vector>

#include "absl/status/status.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/cost_model.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

inline constexpr int kOpClassCount = static_cast<int>(graph::OpClass::kLoss) + 1;

// Fractions of peak reached per op class, indexed by Index(OpClass), in the
// order of graph::OpClass: dense, embedding, recurrent, normalization, pooling,
// elementwise, reduction, softmax, layout, loss.
struct Efficiency {
  static constexpr int Index(graph::OpClass c) { return static_cast<int>(c); }
  // Of the peak FLOP/s for the op's dtype (tensor-core peak for f16/bf16 where
  // the device has one). Dense 0.7 and recurrent 0.5 are typical of cuBLAS/cuDNN
  // on large shapes; the rest are memory-bound and rarely limited by FLOPs.
  std::array<double, kOpClassCount> flops = {0.7, 0.5, 0.5, 0.5, 0.5,
                                             0.5, 0.5, 0.5, 0.5, 0.5};
  // Of the memory bandwidth: streaming kernels reach about 0.8; embedding
  // look-ups gather scattered rows (0.6), reductions and softmax make extra
  // passes (0.7).
  std::array<double, kOpClassCount> bandwidth = {0.8, 0.6, 0.8, 0.8, 0.8,
                                                 0.8, 0.7, 0.7, 0.8, 0.8};
  double op_overhead_s = 5e-6;  // kernel launches and framework work per op

  // InvalidArgument naming the entry unless every fraction is in (0, 1] and the
  // overhead is finite and >= 0.
  absl::Status Validate() const;
};

class RooflineCostModel : public CostModel {
 public:
  // `cluster` is the planned one (e.g. preset.WithDevices(P)); `efficiency`
  // must be valid (Validate()).
  explicit RooflineCostModel(ClusterSpec cluster, Efficiency efficiency = {});

  // max(flops / (peak(dtype) * flops[class]), bytes / (bandwidth * bandwidth[class]))
  // + op_overhead_s; 0 for no work.
  double OpTime(const OpWork& work) const override;
  // CollectiveSeconds(kind, bytes, devices, cluster()).
  double CollectiveTime(Collective kind, double bytes,
                        const std::vector<int>& devices) const override;

  const ClusterSpec& cluster() const { return cluster_; }
  const Efficiency& efficiency() const { return efficiency_; }

 private:
  ClusterSpec cluster_;
  Efficiency efficiency_;
};

}  // namespace tessera::costmodel
