#include "tessera/memory/buffer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tessera::memory {

absl::Status CheckBuffer(const Buffer& b) {
  if (b.size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("size ", b.size, " must be positive; drop empty buffers"));
  }
  if (b.end <= b.start) {
    return absl::InvalidArgumentError(absl::StrCat(
        "end ", b.end, " must be greater than start ", b.start,
        " (the buffer is live on [start, end))"));
  }
  if (b.alignment <= 0 || (b.alignment & (b.alignment - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("alignment ", b.alignment, " is not a power of two"));
  }
  return absl::OkStatus();
}

absl::Status ValidateBuffers(absl::Span<const Buffer> buffers) {
  for (const Buffer& b : buffers) {
    if (absl::Status s = CheckBuffer(b); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", b.id, ": ", s.message()));
    }
  }
  std::vector<int64_t> ids;
  ids.reserve(buffers.size());
  for (const Buffer& b : buffers) ids.push_back(b.id);
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  if (dup != ids.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer ", *dup, ": duplicate id; give every buffer its own id"));
  }
  return absl::OkStatus();
}

BusiestStep FindBusiestStep(absl::Span<const Buffer> buffers) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, delta); frees sort before allocs
  events.reserve(2 * buffers.size());
  for (const Buffer& b : buffers) {
    events.emplace_back(b.start, b.size);
    events.emplace_back(b.end, -b.size);
  }
  std::sort(events.begin(), events.end());
  BusiestStep busiest;
  int64_t live = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    live += events[i].second;
    // Allocations sort last within a step, so the step's live bytes are known after its last event.
    const bool step_done = i + 1 == events.size() || events[i + 1].first != events[i].first;
    if (step_done && live > busiest.live_bytes) busiest = {.step = events[i].first, .live_bytes = live};
  }
  return busiest;
}

int64_t LiveBytesLowerBound(absl::Span<const Buffer> buffers) {
  return FindBusiestStep(buffers).live_bytes;
}

}  // namespace tessera::memory
