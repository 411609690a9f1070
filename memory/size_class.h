// Size classes of the caching allocator: how a request is rounded, which pool serves it, and how
// large a segment to ask the device-memory back-end for when no cached block fits.
//
//   int64_t rounded = tessera::memory::RoundToSizeClass(3000);   // 3072 (a multiple of 512)
//   bool small = rounded <= tessera::memory::kSmallLimit;         // small pool
//   int64_t segment = tessera::memory::SegmentSizeFor(rounded);   // 2 MiB
//
// Classes: up to kSmallLimit (1 MiB) a multiple of kMinBlock (512 B); above it, four classes
// per power of two (2^k times 1, 1.25, 1.5, 1.75), so rounding wastes less than 25%.
// Segments: small requests share kSmallSegment (2 MiB) segments; large ones up to kMediumLimit
// (10 MiB) share kLargeSegment (20 MiB) segments; larger ones get a segment of their own,
// rounded up to a multiple of kSmallSegment.
#pragma once

#include <cstdint>

namespace tessera::memory {

inline constexpr int64_t kMinBlock = 512;               // every block is a multiple of this
inline constexpr int64_t kSmallLimit = int64_t{1} << 20;     // 1 MiB
inline constexpr int64_t kSmallSegment = int64_t{2} << 20;   // 2 MiB
inline constexpr int64_t kMediumLimit = int64_t{10} << 20;   // 10 MiB
inline constexpr int64_t kLargeSegment = int64_t{20} << 20;  // 20 MiB
inline constexpr int64_t kMaxRequest = int64_t{1} << 52;     // 4 PiB: beyond any device
inline constexpr int64_t kLargeDivisions = 4;                // classes per power of two

// `bytes` in (0, kMaxRequest].
int64_t RoundToSizeClass(int64_t bytes);
// `rounded` a result of RoundToSizeClass.
int64_t SegmentSizeFor(int64_t rounded);

}  // namespace tessera::memory
