// Memory-aware sharding: while the plan's peak memory per device exceeds the
// capacity, switch the layer whose switch frees the most memory per added second
// (of the planners' objective) to a strategy that holds less (model_parallel
// usually), until it fits.
//
//   ShardResult r = ShardToFit(problem, choice, capacity);
//   r.fits; r.switched;   // layers whose strategy changed to save memory
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

struct ShardResult {
  Choice choice;
  bool fits = false;
  std::vector<int> switched;  // layer indices, in the order they were switched
};

ShardResult ShardToFit(const Problem& problem, Choice choice, int64_t device_capacity_bytes);

// Each layer on its option holding the least memory: what fits if anything does.
Choice MinimumMemoryChoice(const Problem& problem);

}  // namespace tessera::partitioner
