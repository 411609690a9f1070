#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>

#include "tessera/memory/offset_exact_impl.h"
#include "tessera/memory/offset_search_impl.h"

namespace tessera::memory::internal {
namespace {

using Clock = std::chrono::steady_clock;
using Order = std::vector<int32_t>;

// Sorts indices by `key` descending, ties by size descending then index.
Order SortedBy(absl::Span<const Buffer> buffers, const std::function<double(int32_t)>& key) {
  Order order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return buffers[a].size > buffers[b].size;
  });
  return order;
}

std::vector<Order> SeedOrderings(absl::Span<const Buffer> buffers, const OffsetDecoder& decoder) {
  auto size = [&](int32_t i) { return double(buffers[i].size); };
  auto area = [&](int32_t i) {
    return double(buffers[i].size) * double(buffers[i].end - buffers[i].start);
  };
  auto lifetime = [&](int32_t i) { return double(buffers[i].end - buffers[i].start); };
  auto early = [&](int32_t i) { return -double(buffers[i].start); };
  // Bytes of the buffers live at the same time: all that start before i ends, less those that
  // end before (or when) i starts.
  std::vector<std::pair<int64_t, int64_t>> starts, ends;
  for (const Buffer& b : buffers) {
    starts.emplace_back(b.start, b.size);
    ends.emplace_back(b.end, b.size);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  std::vector<double> start_sum(starts.size() + 1, 0), end_sum(ends.size() + 1, 0);
  for (size_t k = 0; k < starts.size(); ++k) {
    start_sum[k + 1] = start_sum[k] + double(starts[k].second);
    end_sum[k + 1] = end_sum[k] + double(ends[k].second);
  }
  auto conflict_bytes = [&](int32_t i) {
    const size_t began = std::lower_bound(starts.begin(), starts.end(),
                                          std::pair{buffers[i].end, int64_t{0}}) - starts.begin();
    const size_t ended = std::upper_bound(ends.begin(), ends.end(),
                                          std::pair{buffers[i].start, INT64_MAX}) - ends.begin();
    return start_sum[began] - end_sum[ended];
  };
  return {SortedBy(buffers, size), SortedBy(buffers, area), SortedBy(buffers, lifetime),
          SortedBy(buffers, conflict_bytes), SortedBy(buffers, early)};
}

class LocalSearch {
 public:
  // `decode_time`: how long one full decode takes; none is started that would end past the
  // deadline.
  LocalSearch(absl::Span<const Buffer> buffers, OffsetDecoder& decoder,
              const OffsetPlanOptions& options, Clock::duration decode_time)
      : buffers_(buffers),
        decoder_(decoder),
        options_(options),
        rng_(options.seed),
        decode_time_(decode_time) {}

  // Improves on `result` starting from the ordering `start`, in the decoder's current mode,
  // within `budget`. Returns the best ordering it found.
  Order Run(const Order& start, int64_t lower_bound, const SearchBudget& budget,
            SearchResult& result);

 private:
  static constexpr int64_t kRestartPeriod = 1000;
  static constexpr int kRestartKicks = 4;

  void Perturb(Order& order, int32_t top);
  void Restart(const Order& best, Order& current, int64_t& current_arena, int32_t& top);
  bool OutOfBudget(int64_t iterations, int64_t stall) const;

  absl::Span<const Buffer> buffers_;
  OffsetDecoder& decoder_;
  const OffsetPlanOptions& options_;
  std::mt19937_64 rng_;
  Clock::duration decode_time_;
  SearchBudget budget_;
};

bool LocalSearch::OutOfBudget(int64_t iterations, int64_t stall) const {
  if (iterations >= budget_.max_iterations) return true;
  if (options_.max_stall_iterations > 0 && stall >= options_.max_stall_iterations) return true;
  return Clock::now() + decode_time_ >= budget_.deadline;
}

// One of three moves: the buffer that set the arena top to an earlier position, a random buffer
// to an earlier position, or a random buffer swapped with a neighbour live at the same time.
void LocalSearch::Perturb(Order& order, int32_t top) {
  const size_t n = order.size();
  const int move = std::uniform_int_distribution<int>(0, 9)(rng_);
  size_t from = std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  if (move < 4 && top >= 0) {
    from = std::find(order.begin(), order.end(), top) - order.begin();
  } else if (move >= 7) {
    const std::vector<int32_t>& neighbours = decoder_.conflicts(order[from]);
    if (!neighbours.empty()) {
      const int32_t other =
          neighbours[std::uniform_int_distribution<size_t>(0, neighbours.size() - 1)(rng_)];
      std::swap(order[from], *std::find(order.begin(), order.end(), other));
      return;
    }
  }
  if (from == 0) {
    std::swap(order[0], order[std::uniform_int_distribution<size_t>(0, n - 1)(rng_)]);
    return;
  }
  const size_t to = std::uniform_int_distribution<size_t>(0, from - 1)(rng_);
  std::rotate(order.begin() + to, order.begin() + from, order.begin() + from + 1);
}

Order LocalSearch::Run(const Order& start, int64_t lower_bound, const SearchBudget& budget,
                       SearchResult& result) {
  budget_ = budget;
  if (OutOfBudget(result.iterations, 0)) return start;
  Order best = start, current = start, candidate;
  int64_t current_arena = decoder_.Decode(current, INT64_MAX);
  int32_t top = decoder_.top_buffer();
  int64_t stall = 0;
  while (result.arena_bytes > lower_bound && !OutOfBudget(result.iterations, stall)) {
    ++result.iterations;
    ++stall;
    if (stall % kRestartPeriod == 0) Restart(best, current, current_arena, top);
    candidate = current;
    Perturb(candidate, top);
    // Late acceptance: a candidate may be slightly worse than the current ordering, never worse
    // than 1% above the best, so the search can leave plateaus.
    const int64_t cutoff = std::max(current_arena, result.arena_bytes + result.arena_bytes / 100);
    const int64_t arena = decoder_.Decode(candidate, (stall & 1) ? current_arena : cutoff);
    if (arena == OffsetDecoder::kAborted) continue;
    current.swap(candidate);
    current_arena = arena;
    top = decoder_.top_buffer();
    if (arena < result.arena_bytes) {
      result.arena_bytes = arena;
      result.offsets = decoder_.offsets();
      best = current;
      stall = 0;
    }
  }
  return best;
}

// Back to the best ordering, kicked by a few random moves, in either decoding mode.
void LocalSearch::Restart(const Order& best, Order& current, int64_t& current_arena,
                          int32_t& top) {
  current = best;
  if (std::uniform_int_distribution<int>(0, 2)(rng_) == 0) {
    // Diversify: sizes scaled by random factors in [0.5, 1.5), largest first.
    std::uniform_real_distribution<double> noise(0.5, 1.5);
    std::vector<double> key(buffers_.size());
    for (size_t i = 0; i < key.size(); ++i) key[i] = double(buffers_[i].size) * noise(rng_);
    std::sort(current.begin(), current.end(), [&](int32_t a, int32_t b) {
      return key[a] != key[b] ? key[a] > key[b] : a < b;
    });
  } else {
    for (int k = 0; k < kRestartKicks; ++k) Perturb(current, -1);
  }
  if (decoder_.has_skyline() && std::uniform_int_distribution<int>(0, 1)(rng_) == 0) {
    constexpr OffsetDecoder::Mode kModes[] = {OffsetDecoder::Mode::kBestFit,
                                              OffsetDecoder::Mode::kTightest,
                                              OffsetDecoder::Mode::kSkyline};
    decoder_.set_mode(kModes[std::uniform_int_distribution<int>(0, 2)(rng_)]);
  }
  current_arena = decoder_.Decode(current, INT64_MAX);
  top = decoder_.top_buffer();
}

// The seed orderings (the first, greedy, already decoded) in every decoding mode; returns the
// best ordering.
Order StartingOrderings(const std::vector<Order>& seeds, int64_t lower_bound,
                        Clock::time_point deadline, Clock::duration decode_time,
                        OffsetDecoder& decoder, SearchResult& result) {
  Order best = seeds.front();
  for (auto mode : {OffsetDecoder::Mode::kBestFit, OffsetDecoder::Mode::kTightest,
                    OffsetDecoder::Mode::kSkyline}) {
    if (mode != OffsetDecoder::Mode::kBestFit && !decoder.has_skyline()) break;
    decoder.set_mode(mode);
    for (const Order& seed : seeds) {
      if (mode == OffsetDecoder::Mode::kBestFit && &seed == &seeds.front()) continue;  // done
      if (result.arena_bytes <= lower_bound || Clock::now() + decode_time >= deadline) {
        return best;
      }
      ++result.iterations;
      const int64_t arena = decoder.Decode(seed, result.arena_bytes - 1);
      if (arena == OffsetDecoder::kAborted) continue;
      best = seed;
      result.arena_bytes = arena;
      result.offsets = decoder.offsets();
    }
  }
  return best;
}

}  // namespace

SearchResult SearchOffsets(absl::Span<const Buffer> buffers, int64_t lower_bound,
                           const OffsetPlanOptions& options) {
  SearchResult result;
  if (buffers.empty()) return result;
  SearchBudget whole{.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(
                                                        std::max(0.0, options.time_limit_s)))};
  if (options.max_iterations > 0) whole.max_iterations = options.max_iterations;
  OffsetDecoder decoder(buffers);
  std::vector<Order> seeds = SeedOrderings(buffers, decoder);
  const Clock::time_point greedy_start = Clock::now();
  result.arena_bytes = result.greedy_arena_bytes = decoder.Decode(seeds.front(), INT64_MAX);
  const Clock::duration decode_time = Clock::now() - greedy_start;
  result.offsets = decoder.offsets();
  result.iterations = 1;
  if (options.greedy_only) return result;
  Order best =
      StartingOrderings(seeds, lower_bound, whole.deadline, decode_time, decoder, result);
  if (result.arena_bytes <= lower_bound || Clock::now() >= whole.deadline) return result;
  // The exact search when it can take the list (it runs until its arena is proven minimal or the
  // budget is spent), the local search otherwise. Splitting the budget between the two was no
  // better on average on guillotine-cut packings (see docs/memory-planner.md).
  if (CanonicalSearch::Applicable(buffers)) {
    CapacitySearch exact(buffers, lower_bound);
    if (exact.Run(whole, result)) return result;
  }
  LocalSearch local(buffers, decoder, options, decode_time);
  local.Run(best, lower_bound, whole, result);
  return result;
}

}  // namespace tessera::memory::internal
