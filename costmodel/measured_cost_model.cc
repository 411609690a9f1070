// MeasuredCostModel (measured_cost_model.h).
#include "tessera/costmodel/measured_cost_model.h"

#include <utility>

namespace tessera::costmodel {

MeasuredCostModel::MeasuredCostModel(const CostModel& fallback, MeasuredOpTimes times)
    : fallback_(fallback), times_(std::move(times)) {}

bool MeasuredCostModel::Measured(std::string_view name) const {
  return times_.ops.find(std::string(name)) != times_.ops.end();
}

double MeasuredCostModel::OpTime(const OpWork& work) const {
  const bool pass = work.kind == WorkKind::kForward || work.kind == WorkKind::kBackward;
  if (pass && times_.share > 0) {
    const auto it = times_.ops.find(std::string(work.node));
    if (it != times_.ops.end()) {
      const double scale = work.share / times_.share;
      if (work.kind == WorkKind::kForward) return it->second.forward_s * scale;
      double extra = 0;
      if (work.extra_flops > 0) {
        extra = fallback_.OpTime(
            {.flops = work.extra_flops, .op_class = work.op_class, .dtype = work.dtype});
      }
      return it->second.backward_s * scale + extra;
    }
  }
  if (work.kind == WorkKind::kUpdate && times_.update.has_value() &&
      times_.update->optimizer == work.optimizer) {
    return times_.update->seconds_per_param_byte * work.param_bytes;
  }
  if (work.kind == WorkKind::kBucketCopy && times_.bucket_copy_s_per_byte > 0) {
    return times_.bucket_copy_s_per_byte * work.param_bytes;
  }
  return fallback_.OpTime(work);
}

double MeasuredCostModel::CollectiveTime(Collective kind, double bytes,
                                         const std::vector<int>& devices) const {
  return fallback_.CollectiveTime(kind, bytes, devices);
}

}  // namespace tessera::costmodel
