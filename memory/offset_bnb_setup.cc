// The tables of the exact canonical search (see offset_bnb_impl.h): sections, the buffers live
// in each, the buffers live at the same time as each, and the preorders.
#include <algorithm>
#include <numeric>

#include "tessera/memory/offset_bnb_impl.h"

namespace tessera::memory::internal {
namespace {

// The tables grow with the buffers times the sections each lives in, and the search's per-depth
// candidate lists with the square of the buffers: beyond these the search is not used.
constexpr size_t kMaxBuffers = 2048;
constexpr size_t kMaxSectionMembers = size_t{1} << 21;
constexpr size_t kMaxOverlapPairs = size_t{1} << 21;

std::vector<int64_t> SectionTimes(absl::Span<const Buffer> buffers) {
  std::vector<int64_t> times;
  times.reserve(2 * buffers.size());
  for (const Buffer& b : buffers) {
    times.push_back(b.start);
    times.push_back(b.end);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

int32_t TimeIndex(const std::vector<int64_t>& times, int64_t t) {
  return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
}

}  // namespace

bool CanonicalSearch::Applicable(absl::Span<const Buffer> buffers) {
  if (buffers.empty() || buffers.size() > kMaxBuffers) return false;
  const std::vector<int64_t> times = SectionTimes(buffers);
  size_t members = 0;
  for (const Buffer& b : buffers) members += TimeIndex(times, b.end) - TimeIndex(times, b.start);
  if (members > kMaxSectionMembers) return false;
  // Pairs live at the same time: those starting before a buffer ends, less those ended by its
  // start, less itself; every pair counted twice.
  std::vector<int64_t> starts, ends;
  for (const Buffer& b : buffers) {
    starts.push_back(b.start);
    ends.push_back(b.end);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  size_t twice = 0;
  for (const Buffer& b : buffers) {
    twice += (std::lower_bound(starts.begin(), starts.end(), b.end) - starts.begin()) -
             (std::upper_bound(ends.begin(), ends.end(), b.start) - ends.begin()) - 1;
  }
  return twice / 2 <= kMaxOverlapPairs;
}

CanonicalSearch::CanonicalSearch(absl::Span<const Buffer> buffers) : buffers_(buffers) {
  BuildSections();
  const size_t n = buffers_.size();
  // Buffers live at the same time, by a sweep over start times.
  overlaps_.assign(n, {});
  std::vector<int32_t> by_start(n), active;
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(), [&](int32_t a, int32_t b) {
    return buffers_[a].start != buffers_[b].start ? buffers_[a].start < buffers_[b].start : a < b;
  });
  for (int32_t i : by_start) {
    std::erase_if(active, [&](int32_t j) { return buffers_[j].end <= buffers_[i].start; });
    for (int32_t j : active) {
      overlaps_[i].push_back(j);
      overlaps_[j].push_back(i);
    }
    active.push_back(i);
  }
  offset_.assign(n, -1);
  min_offset_.assign(n, 0);
  solution_.assign(n, 0);
  orderings_.resize(n + 2);
  raised_stamp_.assign(n, 0);
}

void CanonicalSearch::BuildSections() {
  const std::vector<int64_t> times = SectionTimes(buffers_);
  const int32_t sections = std::max<int32_t>(0, static_cast<int32_t>(times.size()) - 1);
  section_members_.assign(sections, {});
  initial_total_.assign(sections, 0);
  std::vector<int32_t> cut_delta(sections + 1, 0);
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    section_begin_.push_back(TimeIndex(times, b.start));
    section_end_.push_back(TimeIndex(times, b.end));
    for (int32_t s = section_begin_.back(); s < section_end_.back(); ++s) {
      section_members_[s].push_back(static_cast<int32_t>(i));
      initial_total_[s] += b.size;
    }
    // Lives across boundaries begin .. end - 2 (boundary s separates sections s and s + 1).
    if (section_end_.back() - section_begin_.back() > 1) {
      ++cut_delta[section_begin_.back()];
      --cut_delta[section_end_.back() - 1];
    }
  }
  initial_cuts_.assign(std::max(0, sections - 1), 0);
  int32_t running = 0;
  for (int32_t s = 0; s + 1 < sections; ++s) initial_cuts_[s] = running += cut_delta[s];
  section_mark_.assign(sections, 0);
  slot_base_.assign(buffers_.size() + 1, 0);
  for (size_t i = 0; i < buffers_.size(); ++i) {
    slot_base_[i + 1] = slot_base_[i] + (section_end_[i] - section_begin_[i]);
  }
  initial_slot_.assign(slot_base_.back(), 0);
  for (int32_t sec = 0; sec < sections; ++sec) {
    for (size_t k = 0; k < section_members_[sec].size(); ++k) {
      const int32_t i = section_members_[sec][k];
      initial_slot_[slot_base_[i] + (sec - section_begin_[i])] = static_cast<int32_t>(k);
    }
  }
}

// Sorts a partition's buffers by the preorder: T, A, W in the chosen priority, then index.
std::vector<int32_t> CanonicalSearch::Preordered(const std::vector<int32_t>& members) const {
  struct Key {
    double first, second, third;
    int32_t buffer;
  };
  std::vector<Key> keys;
  keys.reserve(members.size());
  for (int32_t i : members) {
    int64_t most = 0;
    for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) most = std::max(most, total_[s]);
    const Buffer& b = buffers_[i];
    const double total = double(most), width = double(b.end - b.start);
    const double area = double(b.size) * width;
    switch (preorder_) {
      case Preorder::kTotalAreaWidth:
        keys.push_back({total, area, width, i});
        break;
      case Preorder::kTotalWidthArea:
        keys.push_back({total, width, area, i});
        break;
      case Preorder::kWidthAreaTotal:
        keys.push_back({width, area, total, i});
        break;
    }
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.first != b.first) return a.first > b.first;
    if (a.second != b.second) return a.second > b.second;
    if (a.third != b.third) return a.third > b.third;
    return a.buffer < b.buffer;
  });
  std::vector<int32_t> order;
  order.reserve(keys.size());
  for (const Key& k : keys) order.push_back(k.buffer);
  return order;
}

}  // namespace tessera::memory::internal
