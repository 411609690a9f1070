// The order in which a training job visits the examples of a file corpus: a pure function of
// (seed, epoch), so that the batch of any step is known without reading the ones before (a
// resumed run continues the same sequence).
//
//   EpochPlan plan{.examples = 20903, .batch = 64, .seed = 1};
//   std::vector<int64_t> order = EpochOrder(plan, /*epoch=*/3, lengths);  // 326 batches of 64
//   // step s: epoch s / plan.steps(), rows order[(s % plan.steps()) * 64 ...]
//
// Step 1: a permutation of the examples drawn from (seed, epoch) (Fisher-Yates over SplitMix64).
// Step 2 (when lengths are given): runs of `group` batches of it sorted by length, stably, and
// cut into batches, so a batch holds examples of similar length. Step 3: the epoch's batches
// shuffled as wholes. The examples past the last whole batch are left out of that epoch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace tessera::jobs {

struct EpochPlan {
  int64_t examples = 0;
  int64_t batch = 1;
  uint64_t seed = 0;
  int64_t group = 64;  // batches per length-sorted run

  int64_t steps() const { return examples >= batch ? examples / batch : 1; }
};

// steps() * batch indices into [0, examples) (examples < batch: the permutation, repeated).
std::vector<int64_t> EpochOrder(const EpochPlan& plan, int64_t epoch,
                                const std::function<int64_t(int64_t)>& length = nullptr);

// The corpus indices of any step's rows, for a file data source: in training (shuffle) its
// epoch's EpochOrder (the last epoch asked is kept; safe from several threads), else file order
// (step s holds examples s*batch.., wrapping around at the end).
class EpochRows {
 public:
  EpochRows(const EpochPlan& plan, bool shuffle, std::function<int64_t(int64_t)> length = nullptr)
      : plan_(plan), shuffle_(shuffle), length_(std::move(length)) {}
  // Indices of step `step`'s rows [first, first + count).
  std::vector<int64_t> Rows(int64_t step, int64_t first, int64_t count) const;
  int64_t steps_per_epoch() const { return plan_.steps(); }

 private:
  EpochPlan plan_;
  bool shuffle_;
  std::function<int64_t(int64_t)> length_;
  mutable std::mutex mu_;
  mutable int64_t cached_epoch_ = -1;
  mutable std::shared_ptr<const std::vector<int64_t>> cached_order_;
};

}  // namespace tessera::jobs
