// Internal to the lifetime analysis (memory/lifetime.h): the schedule's index, the values'
// index, and the passes that build the values and decide the sharing.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "tessera/costmodel/backward_reads.h"
#include "tessera/graph/graph.h"
#include "tessera/memory/lifetime.h"

namespace tessera::memory::lifetime_internal {

// Where each node runs in the schedule.
struct ScheduleIndex {
  std::vector<graph::NodeId> order;   // forward (topological) order
  std::vector<int64_t> forward_step;  // by NodeId
  std::vector<int64_t> backward_step; // by NodeId; -1 without a backward
  int64_t num_steps = 0;
};

// Which value holds each tensor and each tensor's gradient (-1: none).
struct ValueIndex {
  std::vector<int64_t> of_tensor;  // by TensorId
  std::vector<int64_t> grad_of;    // by TensorId
};

// The steps: forward, backward, update (see memory/lifetime.h).
ScheduleIndex BuildSchedule(const graph::Graph& g, const costmodel::BackwardInfo& b,
                            std::vector<graph::NodeId> order, std::vector<Step>& steps);

// Every value with its lifetime and size, no sharing yet.
std::vector<Value> BuildValues(const graph::Graph& g, const costmodel::BackwardInfo& b,
                               const ScheduleIndex& s, int optimizer_states_per_param,
                               ValueIndex& index);

// Views and in-place: sets Value::shares_with. Nodes in `custom` (LifetimeOptions::
// custom_nodes) share nothing: their kernels may read and write other shapes than the graph's.
void ShareMemory(const graph::Graph& g, const ScheduleIndex& s, const ValueIndex& index,
                 const std::set<std::string>& custom, std::vector<Value>& values);

// For every value, the root of its sharing group (follows shares_with).
std::vector<int64_t> GroupRoots(absl::Span<const Value> values);

}  // namespace tessera::memory::lifetime_internal
