// Internal to the offset planner: the search over capacities around the exact canonical search
// (offset_bnb_impl.h), run in slices of a budget (offset_exact.cc).
//
//   CapacitySearch exact(buffers, lower_bound);  // only if CanonicalSearch::Applicable(buffers)
//   bool proven = exact.Run({.deadline = soon}, result);  // lowers result.arena_bytes
//   if (!proven) proven = exact.Run({.deadline = later}, result);  // carries on
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "tessera/memory/buffer.h"
#include "tessera/memory/offset_bnb_impl.h"
#include "tessera/memory/offset_search_impl.h"

namespace tessera::memory::internal {

class CapacitySearch {
 public:
  // `buffers` must pass CanonicalSearch::Applicable and outlive the search.
  CapacitySearch(absl::Span<const Buffer> buffers, int64_t lower_bound);

  // Lowers result.arena_bytes (and its offsets) until the arena is proven minimal (true), the
  // deadline passes or result.iterations (one per node) reaches budget.max_iterations. A later
  // call carries on where this one stopped, from whatever arena `result` then holds.
  bool Run(const SearchBudget& budget, SearchResult& result);

 private:
  using Outcome = CanonicalSearch::Outcome;

  // One of the two probe sequences that share the nodes.
  struct Sequence {
    int64_t node_limit = 0;  // per preorder and probe
    int64_t nodes = 0;       // spent so far
    int64_t soft = 0;        // bisection: capacities below it given up on at this limit
    int first_preorder = 0;  // the preorder that found the last packing goes first
    bool done = false;
  };

  Outcome Probe(int64_t capacity, int64_t node_limit, Sequence& sequence);
  void FloorStep();
  void BisectionStep();

  absl::Span<const Buffer> buffers_;
  CanonicalSearch search_;
  int64_t g_ = 1;   // every arena is a multiple of it
  int64_t lo_ = 0;  // no arena below it exists
  Sequence floor_, bisection_;
  SearchBudget budget_;
  SearchResult* result_ = nullptr;
  bool stopped_ = false;
};

}  // namespace tessera::memory::internal
