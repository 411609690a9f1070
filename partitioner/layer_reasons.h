// One-line reasons for each layer's strategy in a plan.
//
//   std::vector<std::string> why = LayerReasons(problem, choice, {.planner = "heuristic"});
//   // "parameter-heavy (0.9 FLOP/param byte): late_multiply moves 12 MB vs 205 MB for data_parallel"
#pragma once

#include <string>
#include <vector>

#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

struct ReasonContext {
  std::string planner;          // "heuristic", "optimal", "data", "model"
  std::vector<int> sharded;     // layers switched by memory-aware sharding
  std::vector<int64_t> saved;   // bytes each switch saved, aligned with `sharded`
};

std::vector<std::string> LayerReasons(const Problem& problem, const Choice& choice,
                                      const ReasonContext& context);

}  // namespace tessera::partitioner
