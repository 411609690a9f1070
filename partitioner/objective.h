// The additive cost the planners minimise: per layer its compute, its blocking
// collectives, its gradient traffic (at the bucketed rate), and the transitions
// of its inputs. The simulator (simulate.h) then predicts the step with overlap.
//
//   double s = TotalCost(problem, choice);
//   double one = OptionCost(problem.layers[i].options[k]) + InputsCost(problem, i, k, choice);
#pragma once

#include <vector>

#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

// Compute + blocking comm + gradient traffic of one option (no transitions).
double OptionCost(const LayerOption& option);
// The transition cost of one edge into a consumer requiring `to`; data inputs are free.
const TransitionCost& EdgeTransition(const Problem& problem, int edge, Layout from, Layout to,
                                     bool partial);
// The output layout `choice` gives the producer of `edge` (kBatch for data inputs).
Layout ProducerLayout(const Problem& problem, int edge, const Choice& choice);
// Transitions into layer `layer` running option `option`, producers as in `choice`.
double InputsCost(const Problem& problem, int layer, int option, const Choice& choice);
double TotalCost(const Problem& problem, const Choice& choice);

// The edges each layer produces (indexed by layer).
std::vector<std::vector<int>> OutEdges(const Problem& problem);
// The part of TotalCost that depends on layer i's option when it is `k`: its own
// cost, its input transitions and the transitions into its consumers. `choice` is
// restored before returning.
double NeighbourhoodCost(const Problem& problem, const std::vector<std::vector<int>>& out_edges,
                         int i, int k, Choice& choice);

}  // namespace tessera::partitioner
