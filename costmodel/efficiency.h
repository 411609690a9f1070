// Fractions of a device's peak FLOP/s and memory bandwidth that each op class reaches: the
// factors of the roofline cost model (roofline_cost_model.h). Defaults are typical of GPU
// libraries on large shapes; `tessera calibrate` measures them for this machine's CPU kernels
// and stores them in the `local` cluster file ("efficiency", docs/clusters.md).
//
//   Efficiency e;                                            // the defaults
//   e.flops[Efficiency::Index(graph::OpClass::kDense)] = 0.5;
//   TS_RETURN_IF_ERROR(e.Validate());
//   ClusterSpec c = ...;  c.efficiency = e;                  // RooflineCostModel(c) uses it
#pragma once

#include <array>

#include "absl/status/status.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

inline constexpr int kOpClassCount = static_cast<int>(graph::OpClass::kLoss) + 1;
inline constexpr double kMaxOverlapSlowdown = 10;
inline constexpr double kMaxWinogradSpeedup = 4;  // F(4x4, 3x3): 36 multiplies for 144

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
  // Seconds of compute a device loses per second of collective that overlaps it (the gradient
  // all-reduce during backward). 0: collectives run beside compute, as the presets assume of
  // GPUs with their own copy engines; about 1 or more when the collectives' copies and sums run
  // on the devices' own cores, as on the `local` cluster's thread back-end (`tessera
  // calibrate` measures it).
  double overlap_slowdown = 0;
  // How much faster than `flops[dense]` implies a 3x3 stride-1 convolution runs (OpWork::winograd):
  // cuDNN's Winograd algorithms need 2.25x (F(2x2,3x3)) to 4x (F(4x4,3x3)) fewer multiplies
  // than the direct product but pay for the transforms. 1.5 is what a V100 reaches on VGG-16
  // (docs/clusters.md, "Winograd convolutions"); 1 for kernels without Winograd, as Tessera's
  // own CPU ones: `tessera calibrate` writes 1, and a cluster file's efficiency object that
  // does not name it reads as 1.
  double winograd_speedup = 1.5;

  // InvalidArgument naming the entry unless every fraction is in (0, 1], the overhead is
  // finite and >= 0, the overlap slowdown is finite and in [0, 10] and the Winograd speedup
  // in [1, 4].
  absl::Status Validate() const;
  bool operator==(const Efficiency&) const = default;
};

}  // namespace tessera::costmodel
