// The narrow cost-model interface planners ask two questions of: what does this
// op cost on one device, and what does this transfer cost on these devices.
// Planners are tested against a fake built from a table (tests/partitioner).
// Implementations: RooflineCostModel (FLOPs and bytes against a device's peaks) and
// MeasuredCostModel (a model's op times measured on the device, the roofline for the rest).
//
//   RooflineCostModel model(cluster);                    // efficiencies per op class
//   double t = model.OpTime({.flops = 2e12, .bytes = 1e9,
//                            .op_class = graph::OpClass::kDense, .dtype = graph::DType::kF32});
//   double ar = model.CollectiveTime(Collective::kAllReduce, 100 << 20, {0, 1, 2, 3});
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/graph/dtype.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

// What the work is, for cost models that measured it on the device (measured_cost_model.h);
// a roofline prices every kind from its FLOPs and bytes alone.
enum class WorkKind : uint8_t {
  kOther,       // priced from FLOPs and bytes
  kForward,     // OpWork::node's forward kernel, doing `share` of its global-batch work
  kBackward,    // its backward kernel (no FLOPs: nothing to do, 0 s on a roofline)
  kUpdate,      // the optimizer's update of `param_bytes` bytes of parameters
  kBucketCopy,  // copying `param_bytes` bytes of gradients into a fused bucket (or back)
};

// What one device does for (part of) one op.
struct OpWork {
  double flops = 0;
  double bytes = 0;  // bytes read + written
  graph::OpClass op_class = graph::OpClass::kElementwise;
  graph::DType dtype = graph::DType::kF32;
  // A 3x3 stride-1 convolution (RunsAsWinograd, winograd.h): GPU libraries run it with a
  // Winograd transform, faster than its direct FLOP count implies (Efficiency::winograd_speedup).
  bool winograd = false;
  WorkKind kind = WorkKind::kOther;
  std::string_view node;  // kForward, kBackward: the graph node's name
  double share = 1;       // kForward, kBackward: of the node's global-batch work
  // kBackward: FLOPs of `flops` beyond the node's own backward kernel (late-multiply's product
  // of the gathered X and dY), which a measured kernel time does not include.
  double extra_flops = 0;
  OptimizerKind optimizer = OptimizerKind::kSgd;  // kUpdate
  double param_bytes = 0;  // kUpdate, kBucketCopy
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
