// Op times measured on the device itself, for the planner to use in place of the roofline
// cost model's estimate (exec/op_profile.h measures them with the CPU kernels on this machine;
// docs/hybrid-training.md, "Measured op times"). The roofline prices an op from its FLOPs and
// bytes with one efficiency per op class; a measured time also knows the shape-specific speed
// of the kernel (a convolution with 1 input channel, an LSTM's per-step GEMMs) and the
// framework's own work around it.
//
//   MeasuredOpTimes m{.share = 0.5};                   // measured on a 1/2 batch shard
//   m.ops["conv1"] = {.forward_s = 6.7e-3, .backward_s = 14.1e-3};
//   PlanOptions o{.devices = 2, .measured_ops = std::make_shared<const MeasuredOpTimes>(m)};
//
// A layer option doing `share` of its op's work (1/P for a batch or weight split, 1 when
// replicated) is priced at the measured time times share / MeasuredOpTimes::share; the extra
// backward FLOPs of late-multiply still come from the cost model. Nodes not named keep the
// cost model's price.
//
// `update`, when set, is the optimizer's update measured the same way, in seconds per byte of
// parameters updated: the step's update is priced at that times the device's parameter bytes,
// for the optimizer it was measured with (another optimizer keeps the cost model's price).
// `bucket_copy_s_per_byte`, when above 0, is the copy of gradients into a fused bucket buffer
// (comm/gradient_buckets.h), per byte copied; the copy back after the all-reduce is priced the
// same.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

struct MeasuredOp {
  double forward_s = 0;   // seconds of the forward kernel
  double backward_s = 0;  // seconds of the backward kernel (0: none ran)
};

struct MeasuredUpdate {
  // The update that was timed.
  costmodel::OptimizerKind optimizer = costmodel::OptimizerKind::kSgd;
  double seconds_per_param_byte = 0;
};

struct MeasuredOpTimes {
  double share = 1;                       // of each op's global work the measurement did
  std::map<std::string, MeasuredOp> ops;  // by node name
  std::optional<MeasuredUpdate> update;   // the optimizer's update (none: the cost model's)
  double bucket_copy_s_per_byte = 0;      // gradients into a fused bucket (0: the cost model's)
};

}  // namespace tessera::partitioner
