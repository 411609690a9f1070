// Polishing a plan against the simulator. The planners minimise an additive
// objective that counts gradient traffic as if it were never hidden; the step
// simulator overlaps it with backward. Polish revisits the kPolishLayers dense
// layers holding the most parameters, tries each of their options (re-choosing the
// parameterless layers around them for the new layout: the whole run of them on one
// layout, then each alone), and keeps a change when the
// simulated step time drops. At most kPolishPasses passes.
//
//   Choice better = PolishWithSimulator(problem, PlanHeuristic(problem));
#pragma once

#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

inline constexpr int kPolishLayers = 64;
inline constexpr int kPolishPasses = 2;

Choice PolishWithSimulator(const Problem& problem, Choice choice);

}  // namespace tessera::partitioner
