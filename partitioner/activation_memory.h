// The transient memory one device holds under a plan (activations, their gradients, saved
// masks and statistics, gathered inputs), from the training step's lifetimes
// (memory/lifetime.h) instead of a sum of sizes.
//
//   std::vector<memory::Buffer> buffers = DeviceTransientBuffers(problem, choice);
//   int64_t peak = ActivationPeak(problem, choice);      // most live bytes at any step
//   TS_ASSIGN_OR_RETURN(memory::OffsetPlan arena, memory::PlanOffsets(buffers));
//
// Each value of the lifetimes is scaled by the share of it one device holds: 1/P for layers
// whose output is split (batch or feature), 1 for replicated layers and for parameter
// derivations. Strategies add what the lifetimes of the single-device graph do not hold:
// - model parallel: the replicated copy of each split input, live from the layer's forward to
//   its backward step, and the whole partial dX of that input at its backward step;
// - late multiply: the all-gathered X and dY at the layer's backward step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/memory/buffer.h"
#include "tessera/memory/lifetime.h"
#include "tessera/partitioner/plan.h"
#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

// The per-node scale of Problem::lifetimes under `choice` (indexed by NodeId).
std::vector<double> ActivationScale(const Problem& problem, const Choice& choice);

// The transient buffers of one device: the scaled lifetimes plus the strategies' extras
// (ids of extras follow the lifetimes' value ids).
std::vector<memory::Buffer> DeviceTransientBuffers(const Problem& problem, const Choice& choice);

// memory::LiveBytesLowerBound of DeviceTransientBuffers: the activation peak of one device.
int64_t ActivationPeak(const Problem& problem, const Choice& choice);

// One device's transient buffers under a finished plan, with a name and kind for each.
struct DeviceActivations {
  memory::TrainingLifetimes lifetimes;  // of the whole graph at the global batch
  std::vector<memory::Buffer> buffers;  // scaled to one device, plus the strategies' extras
  std::vector<std::string> names;       // per buffer: the value (group root) or the extra
  std::vector<std::string> kinds;       // per buffer: memory::ValueKindName or "gathered"
};

// Rebuilds the problem of `plan` (made by PlanModel for `graph` with `optimizer`) and returns
// one device's transient buffers. InvalidArgument when a layer's strategy in the plan is not
// one the layer admits (a plan of another graph).
absl::StatusOr<DeviceActivations> PlanDeviceActivations(const graph::Graph& graph,
                                                        const Plan& plan,
                                                        costmodel::OptimizerKind optimizer);

}  // namespace tessera::partitioner
