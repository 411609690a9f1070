// Efficiency::Validate.
#include "tessera/costmodel/efficiency.h"

#include <cmath>

#include "absl/strings/str_cat.h"

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
  if (!(overlap_slowdown >= 0 && overlap_slowdown <= kMaxOverlapSlowdown)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "efficiency overlap_slowdown is ", overlap_slowdown,
        "; allowed: 0 to ", kMaxOverlapSlowdown, " (seconds of compute lost per second of "
        "overlapped collective)"));
  }
  if (!(winograd_speedup >= 1 && winograd_speedup <= kMaxWinogradSpeedup)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "efficiency winograd_speedup is ", winograd_speedup, "; allowed: 1 to ",
        kMaxWinogradSpeedup, " (how much faster than the dense fraction a 3x3 stride-1 "
        "convolution runs; 1: no Winograd kernels)"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::costmodel
