// RooflineCostModel: per-op roofline time and alpha-beta collectives.
#include "tessera/costmodel/roofline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"
#include "tessera/costmodel/collective_cost.h"

namespace tessera::costmodel {
namespace {

absl::Status CheckFraction(absl::string_view table, int index, double value) {
  if (value > 0 && value <= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "efficiency ", table, "[", graph::OpClassName(static_cast<graph::OpClass>(index)),
      "] is ", value, "; allowed: > 0 and <= 1 (a fraction of peak)"));
}

}  // namespace

absl::Status Efficiency::Validate() const {
  for (int i = 0; i < kOpClassCount; ++i) {
    if (absl::Status s = CheckFraction("flops", i, flops[i]); !s.ok()) return s;
    if (absl::Status s = CheckFraction("bandwidth", i, bandwidth[i]); !s.ok()) return s;
  }
  if (!(op_overhead_s >= 0) || !std::isfinite(op_overhead_s)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "efficiency op_overhead_s is ", op_overhead_s, "; allowed: finite seconds >= 0"));
  }
  return absl::OkStatus();
}

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
  const int c = Efficiency::Index(work.op_class);
  TS_CHECK(c >= 0 && c < kOpClassCount) << "op class " << c;
  const double compute =
      work.flops / (cluster_.device.peak_flops(work.dtype) * efficiency_.flops[c]);
  const double memory =
      work.bytes / (cluster_.device.memory_bandwidth * efficiency_.bandwidth[c]);
  return std::max(compute, memory) + efficiency_.op_overhead_s;
}

double RooflineCostModel::CollectiveTime(Collective kind, double bytes,
                                         const std::vector<int>& devices) const {
  return CollectiveSeconds(kind, bytes, devices, cluster_);
}

}  // namespace tessera::costmodel
