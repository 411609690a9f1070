#include "tessera/memory/arena.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"

namespace tessera::memory {

absl::StatusOr<Arena> Arena::Create(DeviceMemory& memory, int64_t bytes, int64_t alignment) {
  TS_RETURN_IF_ERROR(ValidateAllocationRequest("arena", bytes, alignment));
  auto block = DeviceAllocation::Create(memory, bytes, alignment);
  if (!block.ok()) {
    return absl::Status(block.status().code(),
                        absl::StrCat("arena of ", base::HumanBytesExact(bytes), " on ",
                                     memory.name(), ": ",
                                     block.status().message()));
  }
  return Arena(*std::move(block), alignment);
}

Arena::Arena(DeviceAllocation block, int64_t alignment)
    : block_(std::move(block)), alignment_(alignment) {
  stats_.size = block_.size();
}

absl::StatusOr<void*> Arena::At(int64_t offset, int64_t bytes) {
  if (offset < 0 || bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("arena: request at offset ", offset, " of ", base::HumanBytesExact(bytes),
                     "; offsets must be >= 0 and sizes > 0"));
  }
  // offset <= size - bytes avoids overflow of offset + bytes.
  if (bytes > size() || offset > size() - bytes) {
    return absl::OutOfRangeError(absl::StrCat(
        "arena: [", offset, ", ", offset, " + ", bytes, ") lies outside the arena of ",
        base::HumanBytesExact(size()), "; the plan needs a larger arena or the offset is wrong"));
  }
  const int64_t end = offset + bytes;
  ++stats_.requests_this_step;
  ++stats_.requests_total;
  stats_.high_water_this_step = std::max(stats_.high_water_this_step, end);
  stats_.high_water = std::max(stats_.high_water, end);
  return static_cast<char*>(block_.data()) + offset;
}

void Arena::Reset() {
  ++stats_.steps;
  stats_.requests_this_step = 0;
  stats_.high_water_this_step = 0;
}

}  // namespace tessera::memory
