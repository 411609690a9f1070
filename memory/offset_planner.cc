#include "tessera/memory/offset_planner.h"

#include "tessera/base/status_macros.h"
#include "tessera/memory/offset_search_impl.h"

namespace tessera::memory {

absl::StatusOr<OffsetPlan> PlanOffsets(absl::Span<const Buffer> buffers,
                                       const OffsetPlanOptions& options) {
  TS_RETURN_IF_ERROR(ValidateBuffers(buffers));
  OffsetPlan plan;
  plan.lower_bound = LiveBytesLowerBound(buffers);
  internal::SearchResult found = internal::SearchOffsets(buffers, plan.lower_bound, options);
  plan.offsets = std::move(found.offsets);
  plan.offsets.resize(buffers.size(), 0);
  plan.arena_bytes = found.arena_bytes;
  plan.greedy_arena_bytes = found.greedy_arena_bytes;
  plan.iterations = found.iterations;
  plan.proven_optimal = plan.arena_bytes == plan.lower_bound;
  return plan;
}

}  // namespace tessera::memory
