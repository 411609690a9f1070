// Which examples of a training file a job holds out for its metrics when it is given no held-out
// file: every 20th (indices 19, 39, ...), spread over the file whatever its order.
//
//   HeldOutSplit s = SplitEveryNth(corpus.size());
//   LineCorpus train = corpus.Subset(s.train, name), held = corpus.Subset(s.held_out, name + "...");
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::jobs {

inline constexpr int64_t kHeldOutEvery = 20;

struct HeldOutSplit {
  std::vector<int64_t> train, held_out;  // empty held_out: fewer than kHeldOutEvery examples
};

inline HeldOutSplit SplitEveryNth(int64_t examples) {
  HeldOutSplit s;
  for (int64_t i = 0; i < examples; ++i) {
    (i % kHeldOutEvery == kHeldOutEvery - 1 ? s.held_out : s.train).push_back(i);
  }
  return s;
}

}  // namespace tessera::jobs
