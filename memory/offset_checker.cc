#include "tessera/memory/offset_checker.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/text_format.h"

namespace tessera::memory {
namespace {

absl::Status CheckEachBuffer(absl::Span<const Buffer> buffers, const OffsetPlan& plan) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const int64_t offset = plan.offsets[i];
    if (offset < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b.id, ": offset ", offset, " is negative"));
    }
    if (b.alignment > 0 && offset % b.alignment != 0) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", b.id, ": offset ", offset,
                                                     " is not a multiple of its alignment ",
                                                     b.alignment));
    }
    if (offset + b.size > plan.arena_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b.id, ": ends at byte ", offset + b.size,
                       " beyond the arena of ", base::HumanBytesExact(plan.arena_bytes)));
    }
  }
  return absl::OkStatus();
}

// Sweep over start times; every pair live at the same time is compared once.
absl::Status CheckNoOverlap(absl::Span<const Buffer> buffers, const OffsetPlan& plan) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return buffers[a].start < buffers[b].start; });
  std::vector<size_t> active;
  for (size_t i : order) {
    const Buffer& b = buffers[i];
    std::erase_if(active, [&](size_t j) { return buffers[j].end <= b.start; });
    for (size_t j : active) {
      const Buffer& o = buffers[j];
      const bool apart = plan.offsets[i] + b.size <= plan.offsets[j] ||
                         plan.offsets[j] + o.size <= plan.offsets[i];
      if (!apart) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffers ", o.id, " and ", b.id, " are live at the same time (steps [",
            std::max(o.start, b.start), ", ", std::min(o.end, b.end), ")) but overlap: [",
            plan.offsets[j], ", ", plan.offsets[j] + o.size, ") and [", plan.offsets[i], ", ",
            plan.offsets[i] + b.size, ")"));
      }
    }
    active.push_back(i);
  }
  return absl::OkStatus();
}

int64_t PeakLiveBytes(absl::Span<const Buffer> buffers) {
  std::map<int64_t, int64_t> delta;
  for (const Buffer& b : buffers) {
    delta[b.start] += b.size;
    delta[b.end] -= b.size;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [time, d] : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

absl::Status CheckOffsets(absl::Span<const Buffer> buffers, const OffsetPlan& plan) {
  if (plan.offsets.size() != buffers.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the plan has ", plan.offsets.size(),
                                                   " offsets for ", buffers.size(), " buffers"));
  }
  absl::Status status = CheckEachBuffer(buffers, plan);
  if (!status.ok()) return status;
  status = CheckNoOverlap(buffers, plan);
  if (!status.ok()) return status;
  const int64_t peak = PeakLiveBytes(buffers);
  if (plan.lower_bound != peak) {
    return absl::InvalidArgumentError(absl::StrCat("the plan's lower bound ", plan.lower_bound,
                                                   " differs from the peak live bytes ", peak));
  }
  return absl::OkStatus();
}

}  // namespace tessera::memory
