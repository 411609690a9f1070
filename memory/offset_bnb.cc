// The exact canonical search (see offset_bnb_impl.h), step by step:
//  1. Sections: time is cut at every start and end; a section's buffers are all live together, so
//     its unplaced bytes must stack above its floor (the top of its placed buffers).
//  2. A node lists the unplaced buffers by floor (ties by a static preorder). The next buffer
//     placed must sit at its floor, no lower than the buffer placed before it (canonical order),
//     and below the lowest top any unplaced buffer could reach (else that one fits under it: a
//     dominated packing).
//  3. Placing a buffer raises the floors of the buffers live with it and of its sections; a
//     section whose floor (or the current offset) plus its unplaced bytes exceeds the capacity
//     prunes the node.
//  4. When every buffer living across a section boundary is placed, the two sides no longer
//     interact and are solved one after the other (dynamic decomposition).
#include <algorithm>
#include <numeric>

#include "tessera/memory/offset_bnb_impl.h"

namespace tessera::memory::internal {
namespace {

// Alignments are powers of two (ValidateBuffers).
int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace

CanonicalSearch::Outcome CanonicalSearch::Solve(int64_t capacity, Preorder preorder,
                                                int64_t node_limit,
                                                Clock::time_point deadline) {
  capacity_ = capacity;
  preorder_ = preorder;
  node_limit_ = node_limit;
  deadline_ = deadline;
  nodes_ = 0;
  std::fill(offset_.begin(), offset_.end(), -1);
  std::fill(min_offset_.begin(), min_offset_.end(), 0);
  floor_.assign(initial_total_.size(), 0);
  block_max_.assign(initial_total_.size() / kBlock + 1, 0);
  total_ = initial_total_;
  cuts_ = initial_cuts_;
  unplaced_members_ = section_members_;
  unplaced_count_.resize(section_members_.size());
  for (size_t sec = 0; sec < section_members_.size(); ++sec) {
    unplaced_count_[sec] = static_cast<int32_t>(section_members_[sec].size());
  }
  slot_ = initial_slot_;
  offset_log_.clear();
  floor_log_.clear();
  for (int64_t total : total_) {
    if (total > capacity_) return Outcome::kInfeasible;
  }
  // The whole list, split wherever no buffer lives across a boundary.
  std::vector<int32_t> cut_points = {0};
  for (size_t s = 0; s < cuts_.size(); ++s) {
    if (cuts_[s] == 0) cut_points.push_back(static_cast<int32_t>(s) + 1);
  }
  Partition all;
  all.buffers.resize(buffers_.size());
  std::iota(all.buffers.begin(), all.buffers.end(), 0);
  all.section_end = static_cast<int32_t>(total_.size());
  cut_points.push_back(all.section_end);
  return SolveSplit(all, cut_points, 0);
}

CanonicalSearch::Outcome CanonicalSearch::SolvePartition(const Partition& partition, int depth) {
  const std::vector<int32_t> preorder = Preordered(partition.buffers);
  std::vector<int32_t> ordering(preorder.size());
  std::iota(ordering.begin(), ordering.end(), 0);
  std::sort(ordering.begin(), ordering.end(), [&](int32_t a, int32_t b) {
    const int64_t oa = min_offset_[preorder[a]], ob = min_offset_[preorder[b]];
    return oa != ob ? oa < ob : a < b;
  });
  return Search(partition, preorder, ordering, offset_log_.size(), 0, 0, depth);
}

// Solves the parts of `partition` between consecutive cut points one after the other; each part
// holds the unplaced buffers living in its sections.
CanonicalSearch::Outcome CanonicalSearch::SolveSplit(const Partition& partition,
                                                     const std::vector<int32_t>& cut_points,
                                                     int depth) {
  for (size_t c = 1; c < cut_points.size(); ++c) {
    Partition part;
    part.section_begin = cut_points[c - 1];
    part.section_end = cut_points[c];
    for (int32_t i : partition.buffers) {
      if (offset_[i] >= 0) continue;
      if (section_end_[i] <= part.section_begin || part.section_end <= section_begin_[i]) continue;
      part.buffers.push_back(i);
    }
    if (part.buffers.empty()) continue;
    const Outcome outcome = SolvePartition(part, depth);
    if (outcome != Outcome::kFound) return outcome;
  }
  return Outcome::kFound;
}

CanonicalSearch::Outcome CanonicalSearch::Search(const Partition& partition,
                                                 const std::vector<int32_t>& preorder,
                                                 const std::vector<int32_t>& parent,
                                                 size_t raised_mark, int64_t last_offset,
                                                 int32_t last_rank, int depth) {
  if (nodes_ >= node_limit_) return Outcome::kNodeLimit;
  if ((++nodes_ & 255) == 0 && Clock::now() >= deadline_) return Outcome::kDeadline;
  std::vector<int32_t>& ordering = orderings_[depth];
  if (!Order(preorder, parent, raised_mark, ordering)) return Outcome::kFound;
  // Every buffer still to place lands at or above the next offset, so the fullest section's
  // unplaced bytes bound that offset.
  int64_t fullest = 0;
  for (int32_t s = partition.section_begin; s < partition.section_end; ++s) {
    fullest = std::max(fullest, total_[s]);
  }
  const int64_t highest_offset = capacity_ - fullest;
  int64_t min_top = INT64_MAX;
  for (int32_t r : ordering) {
    min_top = std::min(min_top, min_offset_[preorder[r]] + buffers_[preorder[r]].size);
  }
  for (size_t k = 0; k < ordering.size(); ++k) {
    const int32_t rank = ordering[k], i = preorder[rank];
    const int64_t offset = min_offset_[i];
    if (offset < last_offset || (offset == last_offset && rank < last_rank)) continue;
    if (offset >= min_top) break;  // dominated: some unplaced buffer fits below it
    if (offset > highest_offset) break;
    if (offset + buffers_[i].size > capacity_) continue;
    const size_t offset_mark = offset_log_.size(), floor_mark = floor_log_.size();
    Outcome outcome = Outcome::kInfeasible;
    if (Place(i, offset)) {
      outcome = Decompose(partition, preorder, ordering, rank, offset_mark, depth);
    }
    Unplace(i, offset_mark, floor_mark);
    if (outcome != Outcome::kInfeasible) return outcome;
  }
  return Outcome::kInfeasible;
}

// Step 2: the unplaced ranks of `parent` by floor, then rank, into `ordering`; false when none is
// left. `parent` is sorted by the floors before the latest placement; only the buffers it raised
// (offset_log_ from raised_mark on) moved, so those are sorted apart and merged back.
bool CanonicalSearch::Order(const std::vector<int32_t>& preorder,
                            const std::vector<int32_t>& parent, size_t raised_mark,
                            std::vector<int32_t>& ordering) {
  if (++raised_epoch_ == 0) {
    std::fill(raised_stamp_.begin(), raised_stamp_.end(), 0);
    raised_epoch_ = 1;
  }
  for (size_t k = raised_mark; k < offset_log_.size(); ++k) {
    raised_stamp_[offset_log_[k].buffer] = raised_epoch_;
  }
  ordering.clear();
  raised_.clear();
  for (int32_t r : parent) {
    const int32_t i = preorder[r];
    if (offset_[i] >= 0) continue;
    (raised_stamp_[i] == raised_epoch_ ? raised_ : ordering).push_back(r);
  }
  if (ordering.empty() && raised_.empty()) return false;
  auto less = [&](int32_t a, int32_t b) {
    const int64_t oa = min_offset_[preorder[a]], ob = min_offset_[preorder[b]];
    return oa != ob ? oa < ob : a < b;
  };
  if (!raised_.empty()) {
    std::sort(raised_.begin(), raised_.end(), less);
    const size_t kept = ordering.size();
    ordering.insert(ordering.end(), raised_.begin(), raised_.end());
    std::inplace_merge(ordering.begin(), ordering.begin() + kept, ordering.end(), less);
  }
  return true;
}

// Step 4: after placing the buffer of `rank`, split the partition at boundaries no unplaced buffer
// crosses.
CanonicalSearch::Outcome CanonicalSearch::Decompose(const Partition& partition,
                                                    const std::vector<int32_t>& preorder,
                                                    const std::vector<int32_t>& ordering,
                                                    int32_t rank, size_t raised_mark,
                                                    int depth) {
  const int32_t i = preorder[rank];
  std::vector<int32_t> cut_points = {partition.section_begin};
  for (int32_t s = section_begin_[i]; s + 1 < section_end_[i]; ++s) {
    if (--cuts_[s] == 0) cut_points.push_back(s + 1);
  }
  Outcome outcome;
  if (cut_points.size() == 1) {
    outcome = Search(partition, preorder, ordering, raised_mark, offset_[i], rank, depth + 1);
  } else {
    cut_points.push_back(partition.section_end);
    outcome = SolveSplit(partition, cut_points, depth + 1);
  }
  for (int32_t s = section_begin_[i]; s + 1 < section_end_[i]; ++s) ++cuts_[s];
  return outcome;
}

// Step 3: places buffer i at `offset` and raises the floors it implies, logging every change.
// Invariant: a section's floor is the lowest floor of its unplaced buffers (never below the top of
// its placed ones), or that top when none is left. So only i's sections and those where a raised
// buffer sat at the floor can change. False as soon as one of them no longer fits its unplaced
// bytes below the capacity (the others still do: their floors and bytes are as before, and the
// caller checked the offset against the fullest section).
bool CanonicalSearch::Place(int32_t i, int64_t offset) {
  offset_[i] = offset;
  solution_[i] = offset;
  const int64_t top = offset + buffers_[i].size;
  const int32_t begin = section_begin_[i], end = section_end_[i];
  for (int32_t s = begin; s < end; ++s) RemoveFromSection(i, s, top);
  // Raise the neighbours. In i's sections, count those now exactly at the top (cover_ holds the
  // differences); beyond them, note the sections where a raised buffer was the lowest.
  if (++mark_epoch_ == 0) {
    std::fill(section_mark_.begin(), section_mark_.end(), 0);
    mark_epoch_ = 1;
  }
  touched_sections_.clear();
  raised_spans_.clear();
  cover_.assign(end - begin + 1, 0);
  for (int32_t j : overlaps_[i]) {
    if (offset_[j] >= 0 || min_offset_[j] >= top) continue;
    const int64_t old = min_offset_[j];
    offset_log_.push_back({j, old});
    min_offset_[j] = AlignUp(top, buffers_[j].alignment);
    if (min_offset_[j] == top) {
      ++cover_[std::max(section_begin_[j], begin) - begin];
      --cover_[std::min(section_end_[j], end) - begin];
    }
    raised_spans_.push_back({old, section_begin_[j], section_end_[j]});
  }
  TouchRaisedSpans(begin, end);
  // i's sections: the floor stays at the top when a buffer now sits there, else look.
  int32_t at_top = 0;
  for (int32_t s = begin; s < end; ++s) {
    at_top += cover_[s - begin];
    if (!(at_top > 0 ? FitsAt(s) : RefreshFloor(s))) return false;
  }
  for (int32_t s : touched_sections_) {
    if (!RefreshFloor(s)) return false;
  }
  return true;
}

// The raised buffers that had the same floor get one look over the union of their sections
// (outside i's own, [begin, end)).
void CanonicalSearch::TouchRaisedSpans(int32_t begin, int32_t end) {
  std::sort(raised_spans_.begin(), raised_spans_.end(), [](const Span& a, const Span& b) {
    return a.old_floor != b.old_floor ? a.old_floor < b.old_floor : a.begin < b.begin;
  });
  for (size_t k = 0; k < raised_spans_.size();) {
    const Span& first = raised_spans_[k];
    int32_t to = first.end;
    for (++k; k < raised_spans_.size() && raised_spans_[k].old_floor == first.old_floor &&
              raised_spans_[k].begin <= to;
         ++k) {
      to = std::max(to, raised_spans_[k].end);
    }
    TouchAtFloor(first.begin, std::min(to, begin), first.old_floor);
    TouchAtFloor(std::max(first.begin, end), to, first.old_floor);
  }
}

// Notes the sections in [from, to) whose floor is `old` (sections of a buffer whose floor was
// `old`, so none is higher), skipping blocks whose highest floor is below it.
void CanonicalSearch::TouchAtFloor(int32_t from, int32_t to, int64_t old) {
  for (int32_t s = from; s < to;) {
    if (s % kBlock == 0 && s + kBlock <= to && block_max_[s / kBlock] < old) {
      s += kBlock;
      continue;
    }
    if (floor_[s] == old && section_mark_[s] != mark_epoch_) {
      section_mark_[s] = mark_epoch_;
      touched_sections_.push_back(s);
    }
    ++s;
  }
}

// Floors only rise while placing; the log keeps the old floor and its block's highest floor.
void CanonicalSearch::RaiseFloor(int32_t s, int64_t floor) {
  int64_t& block = block_max_[s / kBlock];
  floor_log_.push_back({s, floor_[s], block});
  floor_[s] = floor;
  block = std::max(block, floor);
}

// Takes buffer i out of section s: the floor becomes its top, its bytes leave the section, and it
// is swapped to the end of the section's unplaced prefix, which shrinks. Undone by regrowing the
// prefix (undo runs in reverse order, so i is still just past it then).
void CanonicalSearch::RemoveFromSection(int32_t i, int32_t s, int64_t top) {
  RaiseFloor(s, top);
  total_[s] -= buffers_[i].size;
  const int32_t last = --unplaced_count_[s];
  SwapMembers(s, slot_[slot_base_[i] + (s - section_begin_[i])], last);
}

// Sets section s's floor to the lowest floor of its unplaced buffers (a scan that stops at one
// already at the floor), then checks it as FitsAt.
bool CanonicalSearch::RefreshFloor(int32_t s) {
  int64_t lowest = INT64_MAX;
  int32_t* members = unplaced_members_[s].data();
  const int64_t floor = floor_[s];
  for (int32_t k = 0; k < unplaced_count_[s]; ++k) {
    const int64_t offset = min_offset_[members[k]];
    if (offset <= floor) {
      // Found one at the floor: move it to the front, where the next look starts.
      if (k > 0) SwapMembers(s, 0, k);
      return FitsAt(s);
    }
    lowest = std::min(lowest, offset);
  }
  if (lowest != INT64_MAX) RaiseFloor(s, lowest);
  return FitsAt(s);
}

void CanonicalSearch::SwapMembers(int32_t s, int32_t a, int32_t b) {
  std::vector<int32_t>& members = unplaced_members_[s];
  std::swap(members[a], members[b]);
  slot_[slot_base_[members[a]] + (s - section_begin_[members[a]])] = a;
  slot_[slot_base_[members[b]] + (s - section_begin_[members[b]])] = b;
}

void CanonicalSearch::Unplace(int32_t i, size_t offset_mark, size_t floor_mark) {
  while (floor_log_.size() > floor_mark) {
    const FloorChange& change = floor_log_.back();
    floor_[change.section] = change.floor;
    block_max_[change.section / kBlock] = change.block_max;
    floor_log_.pop_back();
  }
  for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) {
    total_[s] += buffers_[i].size;
    ++unplaced_count_[s];
  }
  while (offset_log_.size() > offset_mark) {
    min_offset_[offset_log_.back().buffer] = offset_log_.back().min_offset;
    offset_log_.pop_back();
  }
  offset_[i] = -1;
}

}  // namespace tessera::memory::internal
