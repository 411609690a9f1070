// A job's training file and its held-out examples: --valid, else --test, else every 20th
// example of the training file (indices 19, 39, ...; spread over the file whatever its order),
// which training then leaves out.
//
//   TS_ASSIGN_OR_RETURN(auto c, OpenWithHeldOut<LineCorpus>({.train = "t.tsv"}, "OCR lines", "line"));
//   c.train->size(); c.held_out->size();
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

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

struct CorpusFiles {
  std::string train, valid, test;
};

template <typename Corpus>
struct CorporaOf {
  std::shared_ptr<const Corpus> train, held_out;
};

// Corpus: a type with static Open(path), size() and Subset(indices, name) (ParallelCorpus,
// LineCorpus). `what` names the files in errors ("parallel text"), `unit` one example ("pair").
// Open's errors, or InvalidArgument when a training file alone is too small to hold any out.
template <typename Corpus>
absl::StatusOr<CorporaOf<Corpus>> OpenWithHeldOut(const CorpusFiles& f, const std::string& what,
                                                  const std::string& unit) {
  TS_ASSIGN_OR_RETURN(Corpus train, Corpus::Open(f.train));
  CorporaOf<Corpus> c;
  const std::string& held = !f.valid.empty() ? f.valid : f.test;
  if (!held.empty()) {
    TS_ASSIGN_OR_RETURN(Corpus h, Corpus::Open(held));
    c.held_out = std::make_shared<const Corpus>(std::move(h));
    c.train = std::make_shared<const Corpus>(std::move(train));
    return c;
  }
  const HeldOutSplit split = SplitEveryNth(train.size());
  if (split.held_out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " '", f.train, "' holds ", train.size(), " ", unit, "s, too few to hold out every ",
        kHeldOutEvery, "th for evaluation; pass --valid FILE"));
  }
  c.held_out = std::make_shared<const Corpus>(train.Subset(
      split.held_out, absl::StrCat(f.train, " (every ", kHeldOutEvery, "th ", unit, ")")));
  c.train = std::make_shared<const Corpus>(train.Subset(split.train, f.train));
  return c;
}

}  // namespace tessera::jobs
