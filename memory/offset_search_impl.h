// Internal to the offset planner: the best-fit decoder and the improvement search.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "tessera/memory/buffer.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::memory::internal {

// Turns an ordering of the buffers into offsets: each buffer in turn goes to the lowest aligned
// offset where it overlaps none of the already placed buffers live at the same time.
class OffsetDecoder {
 public:
  explicit OffsetDecoder(absl::Span<const Buffer> buffers);

  // How an ordering becomes offsets.
  enum class Mode {
    kBestFit,  // each buffer in order at the lowest offset that fits (greedy-by-size best-fit)
    kTightest,  // each buffer in order into the smallest gap that fits (needs the neighbour lists)
    kSkyline,  // bottom-up: the unplaced buffer with the lowest floor (top of its placed
               // neighbours) goes next, ties to the earliest in the order; no gaps below it
  };
  void set_mode(Mode mode) { mode_ = mode; }
  Mode mode() const { return mode_; }

  // Returns the arena size, or kAborted as soon as a buffer would end above `cutoff`.
  int64_t Decode(absl::Span<const int32_t> order, int64_t cutoff);
  static constexpr int64_t kAborted = -1;

  const std::vector<int64_t>& offsets() const { return offsets_; }
  // The buffer that last raised the arena top during the latest decode.
  int32_t top_buffer() const { return top_buffer_; }
  // Buffers live at the same time as buffer i; kept only when there are at most
  // kMaxPairsPerBuffer * n + kMaxPairsExtra such pairs (empty lists otherwise). The skyline mode
  // needs them and at most kMaxSkylineBuffers buffers; otherwise decoding is best-fit.
  const std::vector<int32_t>& conflicts(int32_t i) const { return conflicts_[i]; }
  bool has_skyline() const { return has_skyline_; }
  static constexpr size_t kMaxSkylineBuffers = 2048;
  static constexpr size_t kMaxPairsPerBuffer = 64;
  static constexpr size_t kMaxPairsExtra = 1 << 20;

 private:
  size_t CountConflictPairs() const;
  bool BuildConflicts();
  int64_t LowestFit(int32_t i);          // by the conflict lists
  int64_t LowestFitByScan(int32_t i);    // by the placed buffers in offset order
  int64_t DecodeBestFit(absl::Span<const int32_t> order, int64_t cutoff);
  int64_t DecodeSkyline(absl::Span<const int32_t> order, int64_t cutoff);

  Mode mode_ = Mode::kBestFit;
  bool has_skyline_ = false;
  bool has_conflicts_ = false;
  std::vector<std::pair<int64_t, int64_t>> scratch_;  // [begin, end) of placed neighbours
  std::vector<int32_t> by_offset_;  // placed buffers sorted by offset (best-fit mode)
  std::vector<int32_t> rank_, unplaced_;
  std::vector<int64_t> floor_;

  absl::Span<const Buffer> buffers_;
  std::vector<std::vector<int32_t>> conflicts_;  // buffers live at the same time as each one
  std::vector<int64_t> offsets_;
  std::vector<uint32_t> placed_epoch_;
  uint32_t epoch_ = 0;
  int32_t top_buffer_ = -1;
  };

struct SearchResult {
  std::vector<int64_t> offsets;
  int64_t arena_bytes = 0;
  int64_t greedy_arena_bytes = 0;
  int64_t iterations = 0;
};

// Greedy-by-size best-fit, then (unless options.greedy_only) other orderings, the exact search
// over capacities (offset_exact_impl.h) and a seeded local search on the ordering, until the
// arena is proven minimal or the budget runs out.
SearchResult SearchOffsets(absl::Span<const Buffer> buffers, int64_t lower_bound,
                           const OffsetPlanOptions& options);

// A slice of the budget: a deadline and a cap on SearchResult::iterations.
struct SearchBudget {
  std::chrono::steady_clock::time_point deadline;
  int64_t max_iterations = INT64_MAX;
};

}  // namespace tessera::memory::internal
