// Internal to the offset planner: an exact depth-first search for offsets that keep every buffer
// below a given capacity, after MiniMalloc (Moffitt, ASPLOS 2023).
//
//   CanonicalSearch search(buffers);
//   if (search.Solve(capacity, CanonicalSearch::Preorder::kTotalAreaWidth, 100000, deadline) ==
//       CanonicalSearch::Outcome::kFound) use(search.offsets());
//
// The search builds only "canonical" packings: buffers are placed in non-decreasing offset order,
// each at its floor (the top of the placed buffers live at the same time), so no packing is
// enumerated twice and none with a gap an unplaced buffer could drop into. Every solution can be
// pushed down into this form, so a search that runs out of branches proves the capacity too small.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "tessera/memory/buffer.h"

namespace tessera::memory::internal {

class CanonicalSearch {
 public:
  using Clock = std::chrono::steady_clock;

  // `buffers` must pass ValidateBuffers and outlive the search.
  explicit CanonicalSearch(absl::Span<const Buffer> buffers);

  // False when the list is too large for the search's tables (up to 2,048 buffers with few
  // enough overlaps); the search must not be built then.
  static bool Applicable(absl::Span<const Buffer> buffers);

  enum class Outcome {
    kFound,       // offsets() is a packing within the capacity
    kInfeasible,  // proven: no packing fits the capacity
    kNodeLimit,   // gave up after `node_limit` nodes
    kDeadline,    // gave up at the deadline
  };
  // The static order that breaks ties between buffers with the same floor (MiniMalloc's
  // preorderings): T = the most bytes live in any of the buffer's sections, A = area
  // (size x lifetime), W = width (lifetime), each largest first.
  enum class Preorder { kTotalAreaWidth, kTotalWidthArea, kWidthAreaTotal };

  Outcome Solve(int64_t capacity, Preorder preorder, int64_t node_limit,
                Clock::time_point deadline);
  // By input index; valid after kFound.
  const std::vector<int64_t>& offsets() const { return solution_; }
  // Nodes visited by the latest Solve.
  int64_t nodes() const { return nodes_; }

 private:
  // A set of unplaced buffers and the sections [section_begin, section_end) they live in; no
  // unplaced buffer outside it lives in those sections.
  struct Partition {
    std::vector<int32_t> buffers;
    int32_t section_begin = 0;
    int32_t section_end = 0;
  };
  struct OffsetChange {
    int32_t buffer;
    int64_t min_offset;
  };
  struct FloorChange {
    int32_t section;
    int64_t floor;
    int64_t block_max;
  };
  static constexpr int32_t kBlock = 16;  // sections per block_max_ entry

  void BuildSections();
  std::vector<int32_t> Preordered(const std::vector<int32_t>& members) const;
  Outcome SolvePartition(const Partition& partition, int depth);
  // The node: candidates are the ranks (places in `preorder`) of the unplaced buffers.
  Outcome Search(const Partition& partition, const std::vector<int32_t>& preorder,
                 const std::vector<int32_t>& parent, size_t raised_mark, int64_t last_offset,
                 int32_t last_rank, int depth);
  bool Order(const std::vector<int32_t>& preorder, const std::vector<int32_t>& parent,
             size_t raised_mark, std::vector<int32_t>& ordering);
  Outcome Decompose(const Partition& partition, const std::vector<int32_t>& preorder,
                    const std::vector<int32_t>& ordering, int32_t rank, size_t raised_mark,
                    int depth);
  Outcome SolveSplit(const Partition& partition, const std::vector<int32_t>& cut_points,
                     int depth);
  bool Place(int32_t buffer, int64_t offset);
  void RemoveFromSection(int32_t buffer, int32_t section, int64_t top);
  bool RefreshFloor(int32_t section);
  void SwapMembers(int32_t section, int32_t a, int32_t b);
  void TouchRaisedSpans(int32_t begin, int32_t end);
  void TouchAtFloor(int32_t from, int32_t to, int64_t old);
  void RaiseFloor(int32_t section, int64_t floor);
  // Section s's unplaced bytes fit between its floor and the capacity.
  bool FitsAt(int32_t s) const { return floor_[s] + total_[s] <= capacity_; }
  void Unplace(int32_t buffer, size_t offset_mark, size_t floor_mark);

  absl::Span<const Buffer> buffers_;
  // Time is cut into sections at every start and end; buffer i lives in sections
  // [section_begin_[i], section_end_[i]).
  std::vector<int32_t> section_begin_, section_end_;
  std::vector<std::vector<int32_t>> section_members_;
  std::vector<std::vector<int32_t>> overlaps_;  // buffers live at the same time as each one
  std::vector<int64_t> initial_total_;          // bytes live in each section
  std::vector<int32_t> initial_cuts_;           // buffers living in both section s and s + 1

  // Search state, undone on backtracking.
  std::vector<int64_t> offset_;      // -1 while unplaced
  std::vector<int64_t> min_offset_;  // the floor of each unplaced buffer
  std::vector<int64_t> floor_;       // lowest offset still free in each section
  std::vector<int64_t> block_max_;   // the highest floor of each kBlock sections
  std::vector<int64_t> total_;       // unplaced bytes in each section
  std::vector<int32_t> cuts_;        // unplaced buffers living in both section s and s + 1
  // Each section's unplaced buffers are the first unplaced_count_[s] of unplaced_members_[s];
  // slot_[slot_base_[i] + s - section_begin_[i]] is buffer i's place in section s's list.
  std::vector<std::vector<int32_t>> unplaced_members_;
  std::vector<int32_t> unplaced_count_;
  std::vector<int32_t> slot_, initial_slot_;
  std::vector<size_t> slot_base_;
  std::vector<OffsetChange> offset_log_;
  std::vector<FloorChange> floor_log_;
  std::vector<uint32_t> section_mark_;
  uint32_t mark_epoch_ = 0;
  std::vector<int32_t> touched_sections_;
  std::vector<int32_t> cover_;
  struct Span {  // the sections of a buffer a placement raised, and its floor before
    int64_t old_floor;
    int32_t begin, end;
  };
  std::vector<Span> raised_spans_;
  std::vector<std::vector<int32_t>> orderings_;  // one per depth
  std::vector<int32_t> raised_;
  std::vector<uint32_t> raised_stamp_;
  uint32_t raised_epoch_ = 0;

  std::vector<int64_t> solution_;
  int64_t capacity_ = 0;
  Preorder preorder_ = Preorder::kTotalAreaWidth;
  int64_t node_limit_ = 0;
  int64_t nodes_ = 0;
  Clock::time_point deadline_;
};

}  // namespace tessera::memory::internal
