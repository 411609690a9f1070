// The static offset planner: give every buffer an arena offset so that no two buffers live at the
// same time overlap, with the arena as small as it can find within a time box.
//
//   TS_ASSIGN_OR_RETURN(tessera::memory::OffsetPlan plan,
//                       tessera::memory::PlanOffsets(buffers, {.time_limit_s = 0.5}));
//   // plan.offsets[i] is buffers[i]'s offset; plan.arena_bytes >= plan.lower_bound.
//
// It starts from greedy-by-size best-fit (each buffer at the lowest offset that fits among the
// buffers already placed that overlap it in time) and several other orderings. Lists of up to
// 2,048 buffers (with few enough overlaps) then go to an exact branch and bound over canonical
// packings (after MiniMalloc), run at capacities between the lower bound and the best arena so
// far; larger lists go to a seeded local search on the ordering. It stops when the arena is
// proven minimal, the iteration budget is spent, or the time limit passes. With the same seed and
// a budget reached before the time limit, the result is the same on every run.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/memory/buffer.h"

namespace tessera::memory {

struct OffsetPlan {
  std::vector<int64_t> offsets;  // by input index
  int64_t arena_bytes = 0;       // max over buffers of offset + size
  int64_t lower_bound = 0;       // most live bytes at any moment
  bool proven_optimal = false;   // arena_bytes == lower_bound
  int64_t greedy_arena_bytes = 0;  // what plain greedy-by-size best-fit needed
  int64_t iterations = 0;          // orderings decoded plus exact-search nodes
};

struct OffsetPlanOptions {
  double time_limit_s = 1.0;
  uint64_t seed = 0;
  // Stop after this many iterations: orderings decoded plus exact-search nodes (0: no limit but
  // the time limit).
  int64_t max_iterations = 0;
  // Local search only: stop after this many orderings in a row without a smaller arena (0: never).
  int64_t max_stall_iterations = 0;
  // Plain greedy-by-size best-fit only, no improvement search (the baseline).
  bool greedy_only = false;
};

// InvalidArgument (see ValidateBuffers) on bad input.
absl::StatusOr<OffsetPlan> PlanOffsets(absl::Span<const Buffer> buffers,
                                       const OffsetPlanOptions& options = {});

}  // namespace tessera::memory
