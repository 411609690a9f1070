// The narrow cost-model interface planners ask two questions of: what does this
// op cost on one device, and what does this transfer cost on these devices.
// Planners are tested against a fake built from a table (tests/partitioner).
//
//   RooflineCostModel model(cluster);                    // efficiencies per op class
//   double t = model.OpTime({.flops = 2e12, .bytes = 1e9,
//                            .op_class = graph::OpClass::kDense, .dtype = graph::DType::kF32});
//   double ar = model.CollectiveTime(Collective::kAllReduce, 100 << 20, {0, 1, 2, 3});
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/costmodel/cluster.h"
#include "tessera/graph/dtype.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

// What one device does for (part of) one op.
struct OpWork {
  double flops = 0;
  double bytes = 0;  // bytes read + written
  graph::OpClass op_class = graph::OpClass::kElementwise;
  graph::DType dtype = graph::DType::kF32;
  // A 3x3 stride-1 convolution (RunsAsWinograd, winograd.h): GPU libraries run it with a
  // Winograd transform, faster than its direct FLOP count implies (Efficiency::winograd_speedup).
  bool winograd = false;
};

enum class Collective : uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll };

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Seconds one device needs for `work`.
  virtual double OpTime(const OpWork& work) const = 0;
  // Seconds for a collective among `devices` (cluster device ids, each once).
  // `bytes` is the size of the whole buffer: the reduced tensor for
  // all-reduce/reduce-scatter, the gathered result for all-gather, the broadcast
  // message, the total exchanged by each device for all-to-all.
  virtual double CollectiveTime(Collective kind, double bytes,
                                const std::vector<int>& devices) const = 0;
  // Seconds of compute a device loses per second of collective that overlaps its compute
  // (Efficiency::overlap_slowdown): 0 when collectives run beside compute.
  virtual double OverlapSlowdown() const { return 0; }
};

}  // namespace tessera::costmodel
