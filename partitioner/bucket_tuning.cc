// Gradient-bucket tuning (bucket_tuning.h; docs/partitioner.md, "Gradient buckets").
#include "tessera/partitioner/bucket_tuning.h"

#include <cmath>
#include <map>

#include "tessera/partitioner/simulate.h"

namespace tessera::partitioner {
namespace {

std::vector<int64_t> PowersOfTwo(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t b = from; b <= to; b *= 2) out.push_back(b);
  return out;
}

struct Trial {
  BucketSizes sizes;
  double step_s = 0;
  bool fits = false;
};

// Whether `a` beats `best`: fitting first, then the faster step (beyond the tie tolerance),
// then fewer buckets, then smaller sizes.
bool Better(const Trial& a, const Trial& best) {
  if (a.fits != best.fits) return a.fits;
  const double tie = kBucketTieTolerance * std::max(a.step_s, best.step_s);
  if (std::abs(a.step_s - best.step_s) > tie) return a.step_s < best.step_s;
  if (a.sizes.count != best.sizes.count) return a.sizes.count < best.sizes.count;
  if (a.sizes.bytes != best.sizes.bytes) return a.sizes.bytes < best.sizes.bytes;
  return a.sizes.first_bytes < best.sizes.first_bytes;
}

}  // namespace

BucketCandidates DefaultBucketCandidates() {
  return {.first_bytes = PowersOfTwo(256 << 10, 4 << 20),
          .bytes = PowersOfTwo(256 << 10, 64 << 20)};
}

BucketSizes TuneBuckets(const Problem& problem, const Choice& choice,
                        int64_t device_capacity_bytes, const BucketCandidates& candidates) {
  Problem trial_problem = problem;  // only its bucket sizes change from trial to trial
  // Only the bucket buffers' memory depends on the sizes.
  const MemoryPrediction memory = PredictMemory(problem, choice, device_capacity_bytes);
  const int64_t others = memory.peak_bytes.empty()
                             ? 0
                             : memory.peak_bytes[0] - memory.comm_buffer_bytes;
  const bool any_order =
      candidates.first_bytes.size() == 1 || candidates.bytes.size() == 1;
  // The sizes change the step only through the buckets they form: each layout (the number of
  // gradients in each bucket) is simulated once.
  std::map<std::vector<int>, double> step_of_layout;
  bool have = false;
  Trial best;
  for (int64_t bytes : candidates.bytes) {
    for (int64_t first : candidates.first_bytes) {
      if (first > bytes && !any_order) continue;
      trial_problem.options.buckets = {.first_bytes = first, .bytes = bytes, .tuned = true};
      std::vector<int> layout;
      for (const Bucket& b : FormBuckets(trial_problem, choice)) layout.push_back(b.gradients);
      auto [at, added] = step_of_layout.try_emplace(layout, 0.0);
      if (added) at->second = SimulateStep(trial_problem, choice, false).step.step_time_s;
      Trial t{.sizes = trial_problem.options.buckets, .step_s = at->second,
              .fits = others + BucketBufferBytes(trial_problem, choice) <= device_capacity_bytes};
      t.sizes.count = static_cast<int>(layout.size());
      if (!have || Better(t, best)) best = t, have = true;
    }
  }
  return have ? best.sizes : BucketSizes{.tuned = true};
}

}  // namespace tessera::partitioner
