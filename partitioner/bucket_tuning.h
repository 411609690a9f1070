// Tuning the gradient buckets of a plan: the step simulator (simulate.h) runs the chosen plan
// with every candidate pair of first-bucket and later-bucket sizes, and the fastest step wins.
//
//   BucketCandidates grid = DefaultBucketCandidates();
//   grid.bytes = {4 << 20};                                  // a fixed size is not tuned
//   BucketSizes sizes = TuneBuckets(problem, choice, capacity, grid);
//   problem.options.buckets = sizes;                         // sizes.tuned, sizes.count
//
// Small buckets start communicating early and overlap more of backward but pay each
// collective's latency (and, where collectives share the workers' cores, more compute lost to
// overlap); large ones pay the latency once but leave more communication after backward. Which
// wins depends on the plan's gradients, the order backward finishes them and the cluster, so
// the simulator decides. TuneBuckets is a deterministic function of its inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/partitioner/plan.h"
#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

struct BucketCandidates {
  std::vector<int64_t> first_bytes;  // sizes of bucket 0, the first to be ready
  std::vector<int64_t> bytes;        // sizes of the later buckets
};

// Later buckets 256 KiB to 64 MiB in powers of two; first buckets 256 KiB to 4 MiB in powers of
// two. Pairs whose first bucket is larger than the later ones are not tried (unless one of the
// two lists has a single size, as when the other is fixed).
BucketCandidates DefaultBucketCandidates();

// Two steps whose simulated times differ by less than this fraction are a tie.
inline constexpr double kBucketTieTolerance = 1e-6;

// The candidate pair whose simulated step of `choice` is fastest. Pairs whose memory does not
// fit `device_capacity_bytes` are left out while any pair fits. Ties go to the fewest buckets
// (collectives), then the smaller later bucket, then the smaller first bucket (the same buckets
// in less memory). The result has tuned = true and count = its buckets per step; without any
// bucketed gradient (one device, or no data-parallel parameters) every pair ties and the
// smallest wins, so callers keep their default instead (PlanModel does).
BucketSizes TuneBuckets(const Problem& problem, const Choice& choice,
                        int64_t device_capacity_bytes, const BucketCandidates& candidates);

}  // namespace tessera::partitioner
