// An arena: one allocation of a planned size from a DeviceMemory, serving planned tensors by
// offset. A training step repeats the same allocations, so offsets are planned once (see the
// static offset planner) and every step just adds them to the arena's base address.
//
//   tessera::memory::HostMemory host;
//   TS_ASSIGN_OR_RETURN(auto arena, tessera::memory::Arena::Create(host, plan.arena_size));
//   for (int step = 0; step < steps; ++step) {
//     arena.Reset();                                    // a new step
//     TS_ASSIGN_OR_RETURN(void* x, arena.At(/*offset=*/0, /*bytes=*/4096));
//     ...
//   }
//
// Bounds: At() returns absl::OutOfRange naming the offset, the bytes and the arena size when
// [offset, offset + bytes) does not lie inside the arena, and InvalidArgument for a negative
// offset or bytes <= 0. Offsets come from plans a user can supply (a CSV of buffers), so a bad
// one is an error a caller can cause, not an internal invariant. The arena does not check
// that two tensors served in one step do not overlap: the planner's checker does that once.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "tessera/memory/device_memory.h"

namespace tessera::memory {

struct ArenaStats {
  int64_t size = 0;                  // bytes of the arena
  int64_t steps = 0;                 // Reset() calls so far
  int64_t requests_this_step = 0;    // At() calls that succeeded since the last Reset()
  int64_t high_water_this_step = 0;  // largest offset + bytes served since the last Reset()
  int64_t high_water = 0;            // largest offset + bytes ever served
  int64_t requests_total = 0;        // At() calls that succeeded, all steps
};

class Arena {
 public:
  // Arena alignment: the base is a multiple of it, so planned offsets that are multiples of an
  // alignment <= kDefaultAlignment give addresses with that alignment.
  static constexpr int64_t kDefaultAlignment = 256;

  // `bytes` > 0. ResourceExhausted from the back-end when it cannot hold the arena.
  static absl::StatusOr<Arena> Create(DeviceMemory& memory, int64_t bytes,
                                      int64_t alignment = kDefaultAlignment);

  // The address of [offset, offset + bytes) inside the arena.
  absl::StatusOr<void*> At(int64_t offset, int64_t bytes);
  // Starts a new step: per-step statistics go back to zero. Memory is not touched.
  void Reset();

  void* base() const { return block_.data(); }
  int64_t size() const { return block_.size(); }
  int64_t alignment() const { return alignment_; }
  const ArenaStats& stats() const { return stats_; }

 private:
  Arena(DeviceAllocation block, int64_t alignment);
  DeviceAllocation block_;
  int64_t alignment_;
  ArenaStats stats_;
};

}  // namespace tessera::memory
