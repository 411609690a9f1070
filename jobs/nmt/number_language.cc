#include "tessera/jobs/nmt/number_language.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "tessera/base/hash.h"

namespace tessera::jobs::nmt {
namespace {

constexpr std::array<const char*, 20> kEnglishSmall = {
    "zero",    "one",     "two",       "three",    "four",     "five",    "six",
    "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
constexpr std::array<const char*, 10> kEnglishTens = {
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
constexpr std::array<const char*, 20> kGermanSmall = {
    "null",     "eins",      "zwei",      "drei",     "vier",       "fuenf",    "sechs",
    "sieben",   "acht",      "neun",      "zehn",     "elf",        "zwoelf",   "dreizehn",
    "vierzehn", "fuenfzehn", "sechzehn",  "siebzehn", "achtzehn",   "neunzehn"};
constexpr std::array<const char*, 10> kGermanTens = {
    "", "", "zwanzig", "dreissig", "vierzig", "fuenfzig", "sechzig", "siebzig", "achtzig",
    "neunzig"};

using base::Mix64;

absl::Status CheckRange(int64_t number) {
  if (number >= 0 && number <= kMaxNumber) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "number ", number, " cannot be written: the NMT task covers 0..", kMaxNumber));
}

// English for 1..999: "three hundred twelve".
void AppendEnglishGroup(int64_t group, std::vector<std::string>& out) {
  const int64_t hundreds = group / 100, rest = group % 100;
  if (hundreds > 0) {
    out.push_back(kEnglishSmall[hundreds]);
    out.push_back("hundred");
  }
  if (rest == 0) return;
  if (rest < 20) {
    out.push_back(kEnglishSmall[rest]);
    return;
  }
  out.push_back(kEnglishTens[rest / 10]);
  if (rest % 10 != 0) out.push_back(kEnglishSmall[rest % 10]);
}

// German for 1..999: "drei hundert zwoelf", units before tens ("sechs und fuenfzig"). A one is
// "ein" except as the last word of the whole number (`last` group), where it is "eins".
void AppendGermanGroup(int64_t group, bool last, std::vector<std::string>& out) {
  const int64_t hundreds = group / 100, rest = group % 100;
  if (hundreds > 0) {
    out.push_back(hundreds == 1 ? "ein" : kGermanSmall[hundreds]);
    out.push_back("hundert");
  }
  if (rest == 0) return;
  if (rest < 20) {
    out.push_back(rest == 1 && !last ? "ein" : kGermanSmall[rest]);
    return;
  }
  if (rest % 10 != 0) {
    out.push_back(rest % 10 == 1 ? "ein" : kGermanSmall[rest % 10]);
    out.push_back("und");
  }
  out.push_back(kGermanTens[rest / 10]);
}

// Uniform in [0, n) from a 64-bit hash (Lemire's multiply-high).
int64_t Below(uint64_t hash, int64_t n) {
  return static_cast<int64_t>((static_cast<unsigned __int128>(hash) * static_cast<uint64_t>(n)) >> 64);
}

// A number with a uniformly chosen digit count in [min_digits, 6], uniform among those numbers.
int64_t DrawNumber(uint64_t hash, int64_t min_digits) {
  const int64_t digits = min_digits + Below(Mix64(hash), 7 - min_digits);
  int64_t low = 1, high = 10;
  for (int64_t d = 1; d < digits; ++d) low *= 10;
  high = low * 10;
  if (digits == 1) low = 0;
  return low + Below(Mix64(hash ^ 0x5bd1e995ull), high - low);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> EnglishWords(int64_t number) {
  if (absl::Status s = CheckRange(number); !s.ok()) return s;
  std::vector<std::string> out;
  if (number == 0) return std::vector<std::string>{"zero"};
  if (number >= 1000) {
    AppendEnglishGroup(number / 1000, out);
    out.push_back("thousand");
  }
  if (number % 1000 != 0) AppendEnglishGroup(number % 1000, out);
  return out;
}

absl::StatusOr<std::vector<std::string>> GermanWords(int64_t number) {
  if (absl::Status s = CheckRange(number); !s.ok()) return s;
  std::vector<std::string> out;
  if (number == 0) return std::vector<std::string>{"null"};
  if (number >= 1000) {
    AppendGermanGroup(number / 1000, /*last=*/false, out);
    out.push_back("tausend");
  }
  if (number % 1000 != 0) AppendGermanGroup(number % 1000, /*last=*/true, out);
  return out;
}

const std::vector<std::string>& EnglishLexicon() {
  static const auto* words = [] {
    auto* w = new std::vector<std::string>(kEnglishSmall.begin(), kEnglishSmall.end());
    w->insert(w->end(), kEnglishTens.begin() + 2, kEnglishTens.end());
    w->push_back("hundred");
    w->push_back("thousand");
    return w;
  }();
  return *words;
}

const std::vector<std::string>& GermanLexicon() {
  static const auto* words = [] {
    auto* w = new std::vector<std::string>(kGermanSmall.begin(), kGermanSmall.end());
    w->insert(w->end(), kGermanTens.begin() + 2, kGermanTens.end());
    for (const char* extra : {"ein", "und", "hundert", "tausend"}) w->push_back(extra);
    return w;
  }();
  return *words;
}

Split SplitOf(int64_t number) {
  if (number < 100) return Split::kTrain;
  return Mix64(static_cast<uint64_t>(number) ^ 0x6e6d742d73706c74ull) % 10 == 0 ? Split::kHeldOut
                                                                              : Split::kTrain;
}

Example MakeExample(uint64_t seed, Split split, int64_t index) {
  // Rejection sampling: draw from (seed, split, index, attempt) until the number is in `split`.
  // Held-out numbers all have 3 or more digits, so that split draws only from those.
  const uint64_t base = Mix64(Mix64(seed) ^ (split == Split::kTrain ? 0x7261696eull : 0x68656c64ull));
  const int64_t min_digits = split == Split::kTrain ? 1 : 3;
  int64_t number = 0;
  for (uint64_t attempt = 0;; ++attempt) {
    number = DrawNumber(Mix64(base ^ (Mix64(static_cast<uint64_t>(index)) + attempt)),
                        min_digits);
    if (SplitOf(number) == split) break;
  }
  Example e{.number = number};
  e.source = *EnglishWords(number);
  e.target = *GermanWords(number);
  return e;
}

}  // namespace tessera::jobs::nmt
