// The NMT example's synthetic translation task: the numbers 0..999,999 written in English words
// (the source) and in German words split at their parts (the target), e.g.
//
//   Example e = MakeExample(/*seed=*/7, Split::kTrain, /*index=*/42);
//   // e.g. e.number = 312456,
//   //      e.source = three hundred twelve thousand four hundred fifty six
//   //      e.target = drei hundert zwoelf tausend vier hundert sechs und fuenfzig
//
// The structure a model must learn: German says the units before the tens ("sechs und
// fuenfzig"), has its own teens, and writes 1 as "eins" only at the very end of a number
// ("ein hundert eins", "ein und zwanzig", "ein tausend"). Words are ASCII (ue for u-umlaut,
// ss for sharp s). The longest source has 9 words, the longest target 11.
//
// Examples are a pure function of (seed, split, index). A number's split is fixed (it does not
// depend on the seed): numbers below 100 are always in kTrain, so every word form is seen in
// training; of the others, about one in ten (chosen by a fixed hash) is kHeldOut. The two splits
// never share a number. Numbers are drawn with a uniformly chosen digit count (1 to 6) and then
// uniformly among the numbers with that many digits, so short numbers are common too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::jobs::nmt {

inline constexpr int64_t kMaxNumber = 999999;

enum class Split { kTrain, kHeldOut };

struct Example {
  int64_t number = 0;
  std::vector<std::string> source;  // English
  std::vector<std::string> target;  // German
};

// The words of `number`; InvalidArgument naming the number unless 0 <= number <= kMaxNumber.
absl::StatusOr<std::vector<std::string>> EnglishWords(int64_t number);
absl::StatusOr<std::vector<std::string>> GermanWords(int64_t number);

// Every word EnglishWords / GermanWords can produce, each once, in a fixed order.
const std::vector<std::string>& EnglishLexicon();
const std::vector<std::string>& GermanLexicon();

// The split `number` belongs to (a fixed property of the number).
Split SplitOf(int64_t number);

// Example `index` (>= 0) of `split` for `seed`.
Example MakeExample(uint64_t seed, Split split, int64_t index);

}  // namespace tessera::jobs::nmt
