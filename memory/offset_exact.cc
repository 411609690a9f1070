// The capacity search around the exact canonical search (see offset_search_impl.h), step by step:
//  1. Arenas are multiples of g, the gcd of every size and alignment (each offset is 0 or an
//     aligned-up top), so capacities are probed in steps of g between `lo` (no smaller arena
//     exists: the lower bound, raised by infeasibility proofs) and the best arena so far.
//  2. The floor sequence probes `lo` itself, doubling its node limit after every miss
//     (MiniMalloc's own schedule): it wins when the lower bound is reachable.
//  3. The bisection sequence probes the middle of [soft, best - g], where `soft` is the lowest
//     capacity it has not yet given up on at its current node limit. A pass ends when that range
//     is within 1/1024 of the best; the next starts again from `lo` with twice the limit. It wins
//     when the optimum is above the lower bound.
//  4. A probe runs the search with each of the three preorders in turn (the one that last found a
//     packing for this sequence first): run times are heavy-tailed, and one preorder often finds
//     in a few thousand nodes what another does not find in a million. A found packing lowers the
//     best arena to its top; a proof of infeasibility raises `lo`.
//  5. The sequence that has spent fewer nodes goes next. The search ends when `lo` reaches the
//     best arena (proven optimal), at the deadline or when the node budget is spent.
#include <algorithm>
#include <numeric>

#include "tessera/memory/offset_exact_impl.h"

namespace tessera::memory::internal {
namespace {

using Outcome = CanonicalSearch::Outcome;

constexpr CanonicalSearch::Preorder kPreorders[] = {CanonicalSearch::Preorder::kTotalAreaWidth,
                                                    CanonicalSearch::Preorder::kTotalWidthArea,
                                                    CanonicalSearch::Preorder::kWidthAreaTotal};

constexpr int64_t kMaxNodeLimit = int64_t{1} << 40;

int64_t Granularity(absl::Span<const Buffer> buffers) {
  int64_t g = 0;
  for (const Buffer& b : buffers) g = std::gcd(std::gcd(g, b.size), b.alignment);
  return std::max<int64_t>(g, 1);
}

}  // namespace

// Step 4: tries each preorder in turn at `capacity`; keeps the packing when one is found.
CapacitySearch::Outcome CapacitySearch::Probe(int64_t capacity, int64_t node_limit,
                                              Sequence& sequence) {
  Outcome outcome = Outcome::kNodeLimit;
  for (int k = 0; k < 3 && outcome == Outcome::kNodeLimit; ++k) {
    const int p = (sequence.first_preorder + k) % 3;
    const int64_t left = budget_.max_iterations - result_->iterations;
    if (left <= 0) {
      stopped_ = true;
      return Outcome::kDeadline;
    }
    outcome = search_.Solve(capacity, kPreorders[p], std::min(node_limit, left), budget_.deadline);
    result_->iterations += search_.nodes();
    sequence.nodes += search_.nodes();
    if (outcome == Outcome::kNodeLimit && left < node_limit) {
      stopped_ = true;  // cut short by the budget: not a miss at this limit
      return Outcome::kDeadline;
    }
    if (outcome == Outcome::kFound) {
      int64_t arena = 0;
      for (size_t i = 0; i < buffers_.size(); ++i) {
        arena = std::max(arena, search_.offsets()[i] + buffers_[i].size);
      }
      if (arena < result_->arena_bytes) {
        result_->arena_bytes = arena;
        result_->offsets = search_.offsets();
      }
      sequence.first_preorder = p;
    }
  }
  if (outcome == Outcome::kDeadline) stopped_ = true;
  return outcome;
}

// Step 2.
void CapacitySearch::FloorStep() {
  switch (Probe(lo_, floor_.node_limit, floor_)) {
    case Outcome::kInfeasible:
      lo_ += g_;
      break;
    case Outcome::kNodeLimit:
      floor_.node_limit = std::min(2 * floor_.node_limit, kMaxNodeLimit);
      break;
    default:
      break;
  }
}

// Step 3.
void CapacitySearch::BisectionStep() {
  const int64_t best = result_->arena_bytes;
  auto closed = [&] { return best - bisection_.soft <= std::max(g_, best >> 10); };
  if (closed()) {
    bisection_.soft = lo_ + g_;
    bisection_.node_limit = std::min(2 * bisection_.node_limit, kMaxNodeLimit);
    if (closed()) {
      bisection_.done = true;  // nothing left between the floor probe and the best
      return;
    }
  }
  const int64_t steps = (best - bisection_.soft) / g_;  // capacities soft .. best - g
  const int64_t capacity = bisection_.soft + (steps - 1) / 2 * g_;
  switch (Probe(capacity, bisection_.node_limit, bisection_)) {
    case Outcome::kInfeasible:
      lo_ = std::max(lo_, capacity + g_);
      bisection_.soft = std::max(bisection_.soft, capacity + g_);
      break;
    case Outcome::kNodeLimit:
      bisection_.soft = capacity + g_;
      break;
    default:
      break;
  }
}

CapacitySearch::CapacitySearch(absl::Span<const Buffer> buffers, int64_t lower_bound)
    : buffers_(buffers), search_(buffers), g_(Granularity(buffers)) {
  lo_ = (lower_bound + g_ - 1) / g_ * g_;
  const int64_t limit = std::max<int64_t>(2 * static_cast<int64_t>(buffers_.size()), 256);
  floor_.node_limit = limit;
  bisection_.node_limit = limit;
  bisection_.soft = lo_ + g_;
}

bool CapacitySearch::Run(const SearchBudget& budget, SearchResult& result) {
  budget_ = budget;
  result_ = &result;
  stopped_ = false;
  // Step 5.
  while (lo_ < result.arena_bytes && !stopped_) {
    if (!bisection_.done && bisection_.nodes < floor_.nodes) {
      BisectionStep();
    } else {
      FloorStep();
    }
  }
  return lo_ >= result.arena_bytes;
}

}  // namespace tessera::memory::internal
