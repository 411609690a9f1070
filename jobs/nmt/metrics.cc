#include "tessera/jobs/nmt/metrics.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace tessera::jobs::nmt {
namespace {

// The n-grams of `words` (joined by a space, which words never contain) and their counts.
absl::flat_hash_map<std::string, int64_t> NGramCounts(absl::Span<const std::string> words,
                                                      int n) {
  absl::flat_hash_map<std::string, int64_t> counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    ++counts[absl::StrJoin(words.subspan(i, n), " ")];
  }
  return counts;
}

// The byte length of the white-space character at s[i] as Python's str.isspace() sees it
// (what sacreBLEU's split() and rstrip() remove), 0 when s[i] starts anything else.
size_t SpaceAt(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<uint8_t>(s[i + k]) : 0; };
  const uint8_t b0 = byte(0), b1 = byte(1), b2 = byte(2);
  if (b0 == ' ' || (b0 >= 0x09 && b0 <= 0x0d) || (b0 >= 0x1c && b0 <= 0x1f)) return 1;
  if (b0 == 0xc2 && (b1 == 0x85 || b1 == 0xa0)) return 2;                  // U+0085, U+00A0
  if (b0 == 0xe1 && b1 == 0x9a && b2 == 0x80) return 3;                    // U+1680
  if (b0 == 0xe2 && b1 == 0x80 &&
      ((b2 >= 0x80 && b2 <= 0x8a) || b2 == 0xa8 || b2 == 0xa9 || b2 == 0xaf)) {
    return 3;                                           // U+2000-200A, U+2028, U+2029, U+202F
  }
  if (b0 == 0xe2 && b1 == 0x81 && b2 == 0x9f) return 3;                    // U+205F
  if (b0 == 0xe3 && b1 == 0x80 && b2 == 0x80) return 3;                    // U+3000
  return 0;
}

// One pass of a two-character rule `(A)(B)` -> `before A middle B after` as Python's re.sub
// applies it: leftmost matches, none overlapping (after a match the scan goes on behind B).
template <typename First, typename Second>
std::string PairRule(std::string_view s, First first, Second second, std::string_view before,
                     std::string_view middle, std::string_view after) {
  std::string out;
  out.reserve(s.size() * 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      out.append(before).append(1, s[i]).append(middle).append(1, s[i + 1]).append(after);
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsPeriodOrComma(char c) { return c == '.' || c == ','; }

// mteval-v13a's punctuation class [\{-\~\[-\` -\&\(-\+\:-\@\/].
bool IsPunctuation13a(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// The rules of sacreBLEU's TokenizerRegexp before its final split/join, on " line ".
std::string ApplyRegexRules13a(std::string_view line) {
  std::string padded;  // rule a: ` \1 ` around punctuation
  padded.reserve(line.size() * 3);
  for (char c : line) {
    if (IsPunctuation13a(c)) padded.append(1, ' ').append(1, c).append(1, ' ');
    else padded.push_back(c);
  }
  const auto not_digit = [](char c) { return !IsDigit(c); };
  std::string s = PairRule(padded, not_digit, IsPeriodOrComma, "", " ", " ");  // rule b
  s = PairRule(s, IsPeriodOrComma, not_digit, " ", " ", "");                   // rule c
  return PairRule(s, IsDigit, [](char c) { return c == '-'; }, "", " ", " ");  // rule d
}

// The end of `s` without trailing white space (Python's rstrip()).
std::string_view RightStrip(std::string_view s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t space = SpaceAt(s, i);
    if (space == 0) end = ++i;
    else i += space;
  }
  return s.substr(0, end);
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ArgmaxRows(absl::Span<const float> logits, int64_t classes) {
  if (classes < 1 || logits.size() % classes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logits of ", logits.size(), " values are not rows of ", classes, " classes"));
  }
  std::vector<int64_t> ids(logits.size() / classes);
  for (size_t r = 0; r < ids.size(); ++r) {
    const float* row = logits.data() + r * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (row[c] > row[best]) best = c;
    }
    ids[r] = best;
  }
  return ids;
}

absl::StatusOr<std::vector<int64_t>> PredictedIds(absl::Span<const float> logits, int64_t batch,
                                                  int64_t length, int64_t classes) {
  if (batch < 1 || length < 1 || classes < 1 ||
      static_cast<int64_t>(logits.size()) != batch * length * classes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logits of ", logits.size(), " values are not [length ", length, " * batch ", batch,
        ", classes ", classes, "]"));
  }
  absl::StatusOr<std::vector<int64_t>> time_major = ArgmaxRows(logits, classes);
  if (!time_major.ok()) return time_major.status();
  std::vector<int64_t> ids(batch * length);
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t b = 0; b < batch; ++b) ids[b * length + t] = (*time_major)[t * batch + b];
  }
  return ids;
}

absl::Status TokenAccuracy::Add(absl::Span<const int64_t> predicted,
                                absl::Span<const int64_t> labels, int64_t pad_id) {
  if (predicted.size() != labels.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token accuracy: ", predicted.size(), " predictions for ", labels.size(), " labels"));
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == pad_id) continue;
    ++total;
    correct += predicted[i] == labels[i];
  }
  return absl::OkStatus();
}

double TokenAccuracy::Value() const {
  return total == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(total);
}

void BleuAccumulator::Add(absl::Span<const std::string> hypothesis,
                          absl::Span<const std::string> reference) {
  hypothesis_length_ += static_cast<int64_t>(hypothesis.size());
  reference_length_ += static_cast<int64_t>(reference.size());
  for (int n = 1; n <= kMaxOrder; ++n) {
    const auto hyp = NGramCounts(hypothesis, n);
    const auto ref = NGramCounts(reference, n);
    for (const auto& [gram, count] : hyp) {
      auto it = ref.find(gram);
      matches_[n - 1] += it == ref.end() ? 0 : std::min(count, it->second);  // clipping
      totals_[n - 1] += count;
    }
  }
}

BleuScore BleuAccumulator::Score() const {
  BleuScore s{.hypothesis_length = hypothesis_length_, .reference_length = reference_length_};
  double log_sum = 0;
  bool zero = hypothesis_length_ == 0;
  for (int n = 0; n < kMaxOrder; ++n) {
    s.precisions[n] = totals_[n] == 0 ? 0.0 : static_cast<double>(matches_[n]) / totals_[n];
    if (s.precisions[n] == 0) zero = true;
    else log_sum += std::log(s.precisions[n]);
  }
  if (hypothesis_length_ > 0) {
    s.brevity_penalty = hypothesis_length_ > reference_length_
                            ? 1.0
                            : std::exp(1.0 - static_cast<double>(reference_length_) /
                                                 static_cast<double>(hypothesis_length_));
  }
  s.bleu = zero ? 0.0 : s.brevity_penalty * std::exp(log_sum / kMaxOrder);
  return s;
}

absl::StatusOr<BleuScore> CorpusBleu(absl::Span<const std::vector<std::string>> hypotheses,
                                     absl::Span<const std::vector<std::string>> references) {
  if (hypotheses.size() != references.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BLEU: ", hypotheses.size(), " hypotheses for ", references.size(), " references"));
  }
  BleuAccumulator acc;
  for (size_t i = 0; i < hypotheses.size(); ++i) acc.Add(hypotheses[i], references[i]);
  return acc.Score();
}

std::vector<std::string> Words13a(std::string_view line) {
  // Step 1: the language-independent part of tokenizer_13a.py.
  std::string text = absl::StrReplaceAll(std::string(line), {{"<skipped>", ""}});
  text = absl::StrReplaceAll(text, {{"-\n", ""}});
  text = absl::StrReplaceAll(text, {{"\n", " "}});
  // Step 2: four replace() calls in turn, so "&amp;lt;" ends as "<" as in sacreBLEU.
  for (const auto& [entity, c] : {std::pair{"&quot;", "\""}, std::pair{"&amp;", "&"},
                                  std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}}) {
    text = absl::StrReplaceAll(text, {{entity, c}});
  }
  // Steps 3 and 4: the regular expressions, then split on white space.
  const std::string tokenized = ApplyRegexRules13a(" " + text + " ");
  std::vector<std::string> words;
  std::string_view rest = tokenized;
  size_t start = 0;
  for (size_t i = 0; i <= rest.size();) {
    const size_t space = i < rest.size() ? SpaceAt(rest, i) : 1;
    if (space == 0) {
      ++i;
      continue;
    }
    if (i > start) words.emplace_back(rest.substr(start, i - start));
    i += space;
    start = i;
  }
  return words;
}

std::string Tokenize13a(std::string_view line) { return absl::StrJoin(Words13a(line), " "); }

absl::StatusOr<BleuScore> SacreBleu(absl::Span<const std::string> hypotheses,
                                    absl::Span<const std::string> references) {
  if (hypotheses.size() != references.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BLEU: ", hypotheses.size(), " hypotheses for ", references.size(), " references"));
  }
  BleuAccumulator acc;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    acc.Add(Words13a(RightStrip(hypotheses[i])), Words13a(RightStrip(references[i])));
  }
  return acc.Score();
}

}  // namespace tessera::jobs::nmt
