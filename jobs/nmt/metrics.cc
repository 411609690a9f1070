#include "tessera/jobs/nmt/metrics.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

}  // namespace tessera::jobs::nmt
