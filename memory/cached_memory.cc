// CachedMemory (cached_memory.h).
#include "tessera/memory/cached_memory.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::memory {

CachedMemory::CachedMemory(DeviceMemory& backing)
    : backing_(backing), cache_(backing), name_(absl::StrCat("cached ", backing.name())) {}

absl::StatusOr<void*> CachedMemory::Allocate(int64_t bytes, int64_t alignment) {
  TS_RETURN_IF_ERROR(ValidateAllocationRequest(name_, bytes, alignment));
  if (alignment > kMinBlock) {
    return absl::InvalidArgumentError(absl::StrCat(
        name_, ": alignment ", alignment, " exceeds the cache's block alignment of ", kMinBlock,
        " bytes; allocate from the device memory itself"));
  }
  return cache_.Allocate(bytes);
}

absl::Status CachedMemory::Free(void* ptr) { return cache_.Free(ptr); }

}  // namespace tessera::memory
