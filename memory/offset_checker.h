// The independent checker of an offset plan: shares no code with the planner's search.
//
//   TS_RETURN_IF_ERROR(tessera::memory::CheckOffsets(buffers, plan));
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "tessera/memory/buffer.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::memory {

// OK when the plan has one offset per buffer, every offset is non-negative and a multiple of the
// buffer's alignment, every buffer ends within plan.arena_bytes, no two buffers live at the same
// time overlap in bytes, and plan.lower_bound is the most live bytes at any moment. Otherwise an
// error naming the buffer ids and the values.
absl::Status CheckOffsets(absl::Span<const Buffer> buffers, const OffsetPlan& plan);

}  // namespace tessera::memory
