// Activation layouts across the P devices and the cost of changing layout
// between a producer and a consumer (docs/partitioner.md, "Layouts").
//
//   EdgeCosts e = ComputeEdgeCosts(/*bytes=*/64 << 20, /*needs_grad=*/true, ctx);
//   e.at(Layout::kBatch, Layout::kReplicated, /*partial=*/true).forward_s;  // all-gather
//   e.at(Layout::kBatch, Layout::kReplicated, true).backward_s;             // reduce-scatter
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/costmodel/cost_model.h"

namespace tessera::partitioner {

enum class Layout : uint8_t {
  kBatch,       // split along the batch (sample) axis
  kFeature,     // split along the feature axis (last axis; channels for convolutions)
  kReplicated,  // whole on every device
};
inline constexpr int kNumLayouts = 3;
absl::string_view LayoutName(Layout l);  // "batch", "feature", "replicated"
// The inverse of LayoutName (plan files name layouts so); InvalidArgument naming the value
// and the valid names otherwise.
absl::StatusOr<Layout> ParseLayout(absl::string_view name);

// What the collectives of a plan run on: the cost model and the P devices.
struct CommContext {
  const costmodel::CostModel* cost = nullptr;  // null: every time is 0 (memory-only analysis)
  int devices = 1;
  std::vector<int> device_ids;  // 0..devices-1

  double Time(costmodel::Collective kind, double bytes) const;
  // Bytes one device sends for `kind` over a buffer of `bytes` (ring algorithms).
  double SentBytes(costmodel::Collective kind, double bytes) const;
};
CommContext MakeCommContext(const costmodel::CostModel* cost, int devices);

// Cost of one transition, forward plus the transpose in backward.
struct TransitionCost {
  double forward_s = 0;
  double backward_s = 0;
  double sent_bytes = 0;  // per device, forward + backward
};

// Every transition of one tensor: indexed by producer layout, consumer layout and
// whether the consumer's input gradient is a partial sum (model-parallel consumers
// of a replicated input produce partial dX that must be summed).
struct EdgeCosts {
  std::array<TransitionCost, kNumLayouts * kNumLayouts * 2> table{};
  const TransitionCost& at(Layout from, Layout to, bool partial) const {
    return table[(static_cast<int>(from) * kNumLayouts + static_cast<int>(to)) * 2 + partial];
  }
  TransitionCost& at(Layout from, Layout to, bool partial) {
    return table[(static_cast<int>(from) * kNumLayouts + static_cast<int>(to)) * 2 + partial];
  }
};

// `bytes`: the whole tensor (global batch). `needs_grad`: false for tensors computed
// from data only (no backward transition).
EdgeCosts ComputeEdgeCosts(double bytes, bool needs_grad, const CommContext& ctx);

}  // namespace tessera::partitioner
