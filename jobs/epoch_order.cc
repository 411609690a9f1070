// Deterministic epochs of a file corpus (epoch_order.h).
#include "tessera/jobs/epoch_order.h"

#include <algorithm>
#include <numeric>

#include "tessera/base/hash.h"

namespace tessera::jobs {
namespace {

// Fisher-Yates from `key` (SplitMix64 draws, Lemire's multiply-high for the range).
void Shuffle(std::vector<int64_t>& v, uint64_t key) {
  for (size_t i = v.size(); i > 1; --i) {
    key += 0x9e3779b97f4a7c15ull;
    const uint64_t r = base::Mix64(key);
    std::swap(v[i - 1], v[static_cast<size_t>((static_cast<unsigned __int128>(r) * i) >> 64)]);
  }
}

}  // namespace

std::vector<int64_t> EpochOrder(const EpochPlan& plan, int64_t epoch,
                                const std::function<int64_t(int64_t)>& length) {
  const uint64_t key = base::Mix64(plan.seed ^ base::Mix64(static_cast<uint64_t>(epoch)));
  std::vector<int64_t> order(static_cast<size_t>(plan.examples));
  std::iota(order.begin(), order.end(), 0);
  Shuffle(order, key);
  const int64_t steps = plan.steps(), batch = plan.batch;
  while (static_cast<int64_t>(order.size()) < steps * batch) {  // fewer examples than a batch
    order.insert(order.end(), order.begin(), order.begin() + std::min<int64_t>(
        plan.examples, steps * batch - static_cast<int64_t>(order.size())));
  }
  order.resize(static_cast<size_t>(steps * batch));
  if (length) {
    const int64_t run = std::max<int64_t>(1, plan.group) * batch;
    for (int64_t begin = 0; begin < static_cast<int64_t>(order.size()); begin += run) {
      const auto end = order.begin() + std::min<int64_t>(begin + run, order.size());
      std::stable_sort(order.begin() + begin, end,
                       [&](int64_t a, int64_t b) { return length(a) < length(b); });
    }
  }
  std::vector<int64_t> batches(static_cast<size_t>(steps));
  std::iota(batches.begin(), batches.end(), 0);
  Shuffle(batches, base::Mix64(key + 1));
  std::vector<int64_t> out;
  out.reserve(order.size());
  for (int64_t b : batches) {
    out.insert(out.end(), order.begin() + b * batch, order.begin() + (b + 1) * batch);
  }
  return out;
}

std::vector<int64_t> EpochRows::Rows(int64_t step, int64_t first, int64_t count) const {
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(count));
  if (!shuffle_) {
    for (int64_t r = first; r < first + count; ++r) {
      rows.push_back((step * plan_.batch + r) % plan_.examples);
    }
    return rows;
  }
  const int64_t epoch = step / plan_.steps();
  std::shared_ptr<const std::vector<int64_t>> order;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (epoch != cached_epoch_) {
      cached_order_ = std::make_shared<const std::vector<int64_t>>(EpochOrder(plan_, epoch, length_));
      cached_epoch_ = epoch;
    }
    order = cached_order_;
  }
  const int64_t base = (step % plan_.steps()) * plan_.batch;
  for (int64_t r = first; r < first + count; ++r) rows.push_back((*order)[base + r]);
  return rows;
}

}  // namespace tessera::jobs
