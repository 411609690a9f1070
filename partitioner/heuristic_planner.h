// The heuristic planner: compute-heavy layers (many FLOPs per parameter byte) go
// data-parallel; every other layer takes its cheapest admissible strategy by the
// cost model given its neighbours' layouts, transitions included: greedily in
// topological order (producers known), then refined against both producers and
// consumers until nothing improves (at most kRefinePasses passes).
//
//   Choice c = PlanHeuristic(problem);
//   IsComputeHeavy(problem, problem.layers[i]);   // reason for data_parallel
#pragma once

#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

inline constexpr int kRefinePasses = 4;
// A layer is compute-heavy when its per-device forward+backward FLOPs per parameter
// byte reach kComputeHeavyFactor times the cluster's break-even figure: the FLOPs a
// device does (dense, at the cost model's rate) in the time the bucketed all-reduce
// moves one gradient byte. Its gradient sync then hides behind its own compute.
inline constexpr double kComputeHeavyFactor = 4.0;
double ComputeHeavyThreshold(const Problem& problem);  // FLOP per parameter byte
bool IsComputeHeavy(const Problem& problem, const Layer& layer);

Choice PlanHeuristic(const Problem& problem);

// Greedy with `forced[i]` >= 0 fixing layer i's option (the baselines).
Choice PlanGreedy(const Problem& problem, const std::vector<int>& forced);

}  // namespace tessera::partitioner
