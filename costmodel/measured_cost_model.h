// Op times measured on the device itself, as a cost model: a model's ops are priced at the
// times its kernels took (exec/op_profile.h measures them with the CPU kernels on this
// machine; docs/hybrid-training.md, "Measured op times"), everything else by a fallback cost
// model (the cluster's roofline). The roofline prices an op from its FLOPs and bytes with one
// efficiency per op class; a measured time also knows the shape-specific speed of the kernel (a
// convolution with 1 input channel, an LSTM's per-step GEMMs) and the framework's own work
// around it.
//
//   MeasuredOpTimes m{.share = 0.5};                   // measured on a 1/2 batch shard
//   m.ops["conv1"] = {.forward_s = 6.7e-3, .backward_s = 14.1e-3};
//   RooflineCostModel roofline(cluster);
//   MeasuredCostModel cost(roofline, m);               // what PlanModel is given
//
// Work of kind kForward/kBackward on a node it names (OpWork::node) doing `share` of the op's
// work (1/P for a batch or weight split, 1 when replicated) is priced at the measured time
// times share / MeasuredOpTimes::share; late-multiply's extra backward FLOPs
// (OpWork::extra_flops) come from the fallback. Nodes not named keep the fallback's price.
//
// `update`, when set, is the optimizer's update measured the same way, in seconds per byte of
// parameters updated: kUpdate work of that optimizer is priced at that times its param_bytes
// (another optimizer keeps the fallback's price). `bucket_copy_s_per_byte`, when above 0, prices
// kBucketCopy work: the copy of gradients into a fused bucket buffer (comm/gradient_buckets.h)
// and back after the all-reduce, per byte.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/costmodel/cost_model.h"
#include "tessera/costmodel/op_times.h"
#include "tessera/costmodel/optimizer_kind.h"

namespace tessera::costmodel {

class MeasuredCostModel : public CostModel {
 public:
  // `fallback` prices what `times` lacks and every collective; it must outlive this model.
  MeasuredCostModel(const CostModel& fallback, MeasuredOpTimes times);

  double OpTime(const OpWork& work) const override;
  double CollectiveTime(Collective kind, double bytes,
                        const std::vector<int>& devices) const override;
  double OverlapSlowdown() const override { return fallback_.OverlapSlowdown(); }

  const MeasuredOpTimes& times() const { return times_; }
  // Whether node `name`'s kernels were measured.
  bool Measured(std::string_view name) const;

 private:
  const CostModel& fallback_;
  MeasuredOpTimes times_;
};

}  // namespace tessera::costmodel
