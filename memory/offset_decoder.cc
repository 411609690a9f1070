#include <algorithm>
#include <numeric>

#include "tessera/memory/offset_search_impl.h"

namespace tessera::memory::internal {
namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

OffsetDecoder::OffsetDecoder(absl::Span<const Buffer> buffers)
    : buffers_(buffers),
      conflicts_(buffers.size()),
      offsets_(buffers.size(), 0),
      placed_epoch_(buffers.size(), 0) {
  has_conflicts_ = BuildConflicts();
  if (!has_conflicts_) conflicts_.assign(buffers.size(), {});
  has_skyline_ = has_conflicts_ && buffers.size() <= kMaxSkylineBuffers;
}

// Pairs live at the same time, counted in O(n log n): for each buffer, those that start before it
// ends less those that end before (or when) it starts, less itself; every pair counted twice.
size_t OffsetDecoder::CountConflictPairs() const {
  std::vector<int64_t> starts, ends;
  for (const Buffer& b : buffers_) {
    starts.push_back(b.start);
    ends.push_back(b.end);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  size_t twice = 0;
  for (const Buffer& b : buffers_) {
    const size_t began = std::lower_bound(starts.begin(), starts.end(), b.end) - starts.begin();
    const size_t ended = std::upper_bound(ends.begin(), ends.end(), b.start) - ends.begin();
    twice += began - ended - 1;
  }
  return twice / 2;
}

// Sweeps over start times; gives up (false) when the pairs exceed the budget.
bool OffsetDecoder::BuildConflicts() {
  const size_t budget = kMaxPairsPerBuffer * buffers_.size() + kMaxPairsExtra;
  if (CountConflictPairs() > budget) return false;
  std::vector<int32_t> by_start(buffers_.size());
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(),
            [&](int32_t a, int32_t b) { return buffers_[a].start < buffers_[b].start; });
  std::vector<int32_t> active;
  size_t pairs = 0;
  for (int32_t i : by_start) {
    std::erase_if(active, [&](int32_t j) { return buffers_[j].end <= buffers_[i].start; });
    pairs += active.size();
    if (pairs > budget) return false;
    for (int32_t j : active) {
      conflicts_[i].push_back(j);
      conflicts_[j].push_back(i);
    }
    active.push_back(i);
  }
  return true;
}

int64_t OffsetDecoder::LowestFit(int32_t i) {
  scratch_.clear();
  for (int32_t j : conflicts_[i]) {
    if (placed_epoch_[j] == epoch_) {
      scratch_.emplace_back(offsets_[j], offsets_[j] + buffers_[j].size);
    }
  }
  std::sort(scratch_.begin(), scratch_.end());
  const int64_t size = buffers_[i].size;
  const bool tightest = mode_ == Mode::kTightest;
  int64_t candidate = 0, best = -1, best_gap = INT64_MAX;
  for (const auto& [begin, end] : scratch_) {
    if (begin >= candidate + size) {
      if (!tightest) return candidate;
      if (begin - candidate < best_gap) {
        best_gap = begin - candidate;
        best = candidate;
      }
    }
    if (end > candidate) candidate = AlignUp(end, buffers_[i].alignment);
  }
  return best >= 0 ? best : candidate;
}

// Scans the placed buffers by offset, skipping those not live at the same time as buffer i.
int64_t OffsetDecoder::LowestFitByScan(int32_t i) {
  const Buffer& b = buffers_[i];
  int64_t candidate = 0;
  for (int32_t j : by_offset_) {
    const Buffer& o = buffers_[j];
    if (o.end <= b.start || b.end <= o.start) continue;
    const int64_t begin = offsets_[j];
    if (begin >= candidate + b.size) break;
    const int64_t end = begin + o.size;
    if (end > candidate) candidate = AlignUp(end, b.alignment);
  }
  return candidate;
}

int64_t OffsetDecoder::Decode(absl::Span<const int32_t> order, int64_t cutoff) {
  if (++epoch_ == 0) {  // wrapped: forget every earlier decode
    std::fill(placed_epoch_.begin(), placed_epoch_.end(), 0);
    epoch_ = 1;
  }
  if (mode_ == Mode::kSkyline && has_skyline_) return DecodeSkyline(order, cutoff);
  return DecodeBestFit(order, cutoff);
}

int64_t OffsetDecoder::DecodeSkyline(absl::Span<const int32_t> order, int64_t cutoff) {
  const size_t n = order.size();
  rank_.resize(buffers_.size());
  for (size_t r = 0; r < n; ++r) rank_[order[r]] = static_cast<int32_t>(r);
  floor_.assign(buffers_.size(), 0);
  unplaced_.assign(order.begin(), order.end());
  int64_t arena = 0;
  while (!unplaced_.empty()) {
    size_t pick = 0;
    for (size_t k = 1; k < unplaced_.size(); ++k) {
      const int32_t a = unplaced_[k], b = unplaced_[pick];
      if (floor_[a] < floor_[b] || (floor_[a] == floor_[b] && rank_[a] < rank_[b])) pick = k;
    }
    const int32_t i = unplaced_[pick];
    unplaced_[pick] = unplaced_.back();
    unplaced_.pop_back();
    const int64_t top = floor_[i] + buffers_[i].size;
    if (top > cutoff) return kAborted;
    offsets_[i] = floor_[i];
    placed_epoch_[i] = epoch_;
    if (top > arena) {
      arena = top;
      top_buffer_ = i;
    }
    for (int32_t j : conflicts_[i]) {
      if (placed_epoch_[j] != epoch_)
        floor_[j] = std::max(floor_[j], AlignUp(top, buffers_[j].alignment));
    }
  }
  return arena;
}

int64_t OffsetDecoder::DecodeBestFit(absl::Span<const int32_t> order, int64_t cutoff) {
  by_offset_.clear();
  int64_t arena = 0;
  for (int32_t i : order) {
    const int64_t offset = has_conflicts_ ? LowestFit(i) : LowestFitByScan(i);
    const int64_t top = offset + buffers_[i].size;
    if (top > cutoff) return kAborted;
    offsets_[i] = offset;
    placed_epoch_[i] = epoch_;
    if (!has_conflicts_) {
      by_offset_.insert(
          std::upper_bound(by_offset_.begin(), by_offset_.end(), offset,
                           [&](int64_t value, int32_t j) { return value < offsets_[j]; }),
          i);
    }
    if (top > arena) {
      arena = top;
      top_buffer_ = i;
    }
  }
  return arena;
}

}  // namespace tessera::memory::internal
