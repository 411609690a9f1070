// The exact planner: dynamic programming over the layers in topological order.
// The state after layer i is the layout of every live tensor (produced at or
// before i, read after i); a layer's choice depends only on its inputs' layouts,
// which the state holds, so the minimum of the planners' additive objective
// (objective.h) is exact for chains and branching graphs alike. Real models keep
// few tensors live (ResNet: 2, transformers: a few), so states stay at most 3^live.
//
//   ExactResult r = PlanExact(problem);
//   r.choice; r.cost; r.exact;   // false when the state cap pruned states
#pragma once

#include <cstdint>

#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

// Beyond this many states after one layer, only the cheapest kMaxExactStates are
// kept (a beam search): the result is then a good plan but not proven optimal.
inline constexpr int kMaxExactStates = 1 << 14;

struct ExactResult {
  Choice choice;
  double cost = 0;      // TotalCost(problem, choice)
  bool exact = true;    // false when the cap pruned states
  int64_t max_states = 0;
};

ExactResult PlanExact(const Problem& problem, int max_states = kMaxExactStates);

}  // namespace tessera::partitioner
