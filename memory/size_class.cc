#include "tessera/memory/size_class.h"

#include <bit>

#include "tessera/base/check.h"

namespace tessera::memory {
namespace {

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

int64_t RoundToSizeClass(int64_t bytes) {
  TS_CHECK(bytes > 0 && bytes <= kMaxRequest) << bytes;
  if (bytes <= kSmallLimit) return RoundUp(bytes, kMinBlock);
  // The power of two at or below `bytes`, cut into kLargeDivisions steps.
  const int64_t floor_pow2 =
      static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(bytes)));
  return RoundUp(bytes, floor_pow2 / kLargeDivisions);
}

int64_t SegmentSizeFor(int64_t rounded) {
  if (rounded <= kSmallLimit) return kSmallSegment;
  if (rounded <= kMediumLimit) return kLargeSegment;
  return RoundUp(rounded, kSmallSegment);
}

}  // namespace tessera::memory
