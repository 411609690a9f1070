// A table-driven cost model for planner tests: op time = flops * seconds_per_flop,
// collective time = collective_latency_s + bytes * seconds_per_byte[kind] (no topology; the
// latency 0 unless a test sets it); compute overlapped by a collective slows down by
// `overlap_slowdown` (0 unless a test sets it).
#pragma once

#include <array>
#include <vector>

#include "tessera/costmodel/cost_model.h"

namespace tessera::partitioner::testing {

class FakeCostModel : public costmodel::CostModel {
 public:
  double seconds_per_flop = 1e-12;
  // all-reduce, all-gather, reduce-scatter, broadcast, all-to-all
  std::array<double, 5> seconds_per_byte = {2e-9, 1e-9, 1e-9, 1e-9, 1e-9};

  double collective_latency_s = 0;
  double overlap_slowdown = 0;

  double OverlapSlowdown() const override { return overlap_slowdown; }
  double OpTime(const costmodel::OpWork& work) const override {
    return work.flops * seconds_per_flop;
  }
  double CollectiveTime(costmodel::Collective kind, double bytes,
                        const std::vector<int>& devices) const override {
    if (devices.size() <= 1 || bytes <= 0) return 0;
    return collective_latency_s + bytes * seconds_per_byte[static_cast<int>(kind)];
  }
};

}  // namespace tessera::partitioner::testing
