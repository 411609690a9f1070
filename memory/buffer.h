// A buffer to place in a statically planned arena, and the checks every planner input must pass.
//
//   std::vector<tessera::memory::Buffer> buffers = {
//       {.id = 0, .start = 0, .end = 2, .size = 256},
//       {.id = 1, .start = 1, .end = 3, .size = 64, .alignment = 64}};
//   TS_RETURN_IF_ERROR(tessera::memory::ValidateBuffers(buffers));
//   int64_t floor = tessera::memory::LiveBytesLowerBound(buffers);  // 320
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace tessera::memory {

// A buffer live on the half-open step interval [start, end) that needs `size` bytes at an offset
// that is a multiple of `alignment` (a power of two).
struct Buffer {
  int64_t id = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t size = 0;
  int64_t alignment = 1;
};

// InvalidArgument naming the buffer id and the value when a size is <= 0, end <= start, an
// alignment is not a power of two, or two buffers share an id.
absl::Status ValidateBuffers(absl::Span<const Buffer> buffers);
// One buffer's part of ValidateBuffers: InvalidArgument naming the value (not the buffer, for the
// caller to name as it knows it), e.g. "size 0 must be positive; drop empty buffers".
absl::Status CheckBuffer(const Buffer& b);

// The most bytes live at any one moment: no arena can be smaller.
int64_t LiveBytesLowerBound(absl::Span<const Buffer> buffers);

// The first step at which LiveBytesLowerBound's bytes are live ({0, 0} for no buffers).
struct BusiestStep {
  int64_t step = 0;
  int64_t live_bytes = 0;
};
BusiestStep FindBusiestStep(absl::Span<const Buffer> buffers);

}  // namespace tessera::memory
