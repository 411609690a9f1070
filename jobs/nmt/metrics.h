// The NMT example's metrics: token accuracy and corpus BLEU-4.
//
//   // logits [length*batch, classes] of the model's classifier (time-major, as the zoo's
//   // "nmt" model computes them); labels [batch*length] as NmtDataSource fills them.
//   TS_ASSIGN_OR_RETURN(std::vector<int64_t> ids, PredictedIds(logits, batch, length, 2000));
//   TokenAccuracy accuracy;
//   TS_RETURN_IF_ERROR(accuracy.Add(ids, labels));      // <pad> positions do not count
//   BleuAccumulator bleu;
//   bleu.Add(hypothesis_words, reference_words);        // once per sentence
//   double score = bleu.Score().bleu;                   // in [0, 1]
//   // Detokenised text, scored the way sacreBLEU does (13a tokenisation, no smoothing):
//   TS_ASSIGN_OR_RETURN(BleuScore sacre, SacreBleu(hypothesis_lines, reference_lines));
//   double points = sacre.Points();                     // 0-100, as sacreBLEU prints it
//
// BLEU follows Papineni et al. (2002) at corpus level, as multi-bleu.perl and sacreBLEU (no
// smoothing) compute it: for n = 1..4 the modified precision p_n = sum over sentences of the
// hypothesis n-grams' counts clipped by the reference's counts, divided by the number of
// hypothesis n-grams; brevity penalty BP = 1 when the total hypothesis length c exceeds the
// total reference length r, else exp(1 - r/c); BLEU = BP * exp(mean_n log p_n), which is 0 when
// some p_n is 0 (or c is 0). One reference per sentence.
//
// `SacreBleu` takes detokenised lines and splits both sides with `Tokenize13a`, sacreBLEU's
// default tokenizer (mteval-v13a.pl's, as in sacrebleu/tokenizers/tokenizer_13a.py and
// tokenizer_re.py), so its score equals `sacrebleu -tok 13a -s none` on the same lines, and
// the default `-s exp` as well unless some n-gram order has no match at all.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tessera::jobs::nmt {

// The argmax class of each row of `logits` [rows, classes] (the first on ties).
// InvalidArgument when classes < 1 or the size is not a multiple of it.
absl::StatusOr<std::vector<int64_t>> ArgmaxRows(absl::Span<const float> logits, int64_t classes);

// Argmax ids in batch-major order [batch, length] from time-major logits
// [length * batch, classes] (row t*batch + b is position t of sentence b).
// InvalidArgument when the size is not length * batch * classes.
absl::StatusOr<std::vector<int64_t>> PredictedIds(absl::Span<const float> logits, int64_t batch,
                                                  int64_t length, int64_t classes);

struct TokenAccuracy {
  int64_t correct = 0;
  int64_t total = 0;  // positions whose label is not `pad_id`

  // Counts the positions of `labels` other than `pad_id`, and those where `predicted` equals
  // the label. InvalidArgument when the sizes differ.
  absl::Status Add(absl::Span<const int64_t> predicted, absl::Span<const int64_t> labels,
                   int64_t pad_id = 0);
  // correct / total; 0 when nothing was counted.
  double Value() const;
};

struct BleuScore {
  double bleu = 0;                       // in [0, 1]
  std::array<double, 4> precisions{};    // p_1 .. p_4
  double brevity_penalty = 0;
  int64_t hypothesis_length = 0;         // c: words over all hypotheses
  int64_t reference_length = 0;          // r: words over all references

  // BLEU on sacreBLEU's 0-100 scale.
  double Points() const { return 100.0 * bleu; }
};

class BleuAccumulator {
 public:
  static constexpr int kMaxOrder = 4;
  void Add(absl::Span<const std::string> hypothesis, absl::Span<const std::string> reference);
  BleuScore Score() const;

 private:
  std::array<int64_t, kMaxOrder> matches_{};  // clipped n-gram matches, by order
  std::array<int64_t, kMaxOrder> totals_{};   // hypothesis n-grams, by order
  int64_t hypothesis_length_ = 0;
  int64_t reference_length_ = 0;
};

// BLEU of hypotheses[i] against references[i]; InvalidArgument when the counts differ.
absl::StatusOr<BleuScore> CorpusBleu(absl::Span<const std::vector<std::string>> hypotheses,
                                     absl::Span<const std::vector<std::string>> references);

// sacreBLEU's `13a` tokenisation of one detokenised line, in its steps:
//   1. drop "<skipped>", join "-\n" (a word hyphenated at a line break), other "\n" -> " ";
//   2. unescape &quot; &amp; &lt; &gt; (in this order, once each);
//   3. pad with one space on both sides, then apply in turn (each a left-to-right pass):
//      a. ` \1 ` around every character of [{-~ [-` space-& (-+ :-@ /], i.e. ASCII
//         punctuation except ' , - . (and digits, letters);
//      b. "X." / "X," with X not a digit -> "X . " / "X , " (period and comma not after a digit);
//      c. ".X" / ",X" with X not a digit -> " . X" / " , X" (nor before a digit);
//      d. "9-" -> "9 - " (a dash after a digit);
//   4. collapse whitespace runs (Python's str.split: ASCII and Unicode white space) to one
//      space, no space at either end.
// Example: "Hello, world: 3.5-4 &amp; more." -> "Hello , world : 3.5 - 4 & more .".
// Bytes that are not ASCII pass through; the rules see UTF-8 text as sacreBLEU sees code points.
std::string Tokenize13a(std::string_view line);

// The words of Tokenize13a(line) (none for a blank line).
std::vector<std::string> Words13a(std::string_view line);

// Corpus BLEU of detokenised hypotheses[i] against references[i] as sacreBLEU's BLEU computes
// it: trailing white space removed (its `rstrip`), `Tokenize13a`, case-sensitive, corpus-level
// statistics, no smoothing. InvalidArgument when the counts differ. `Points()` is the 0-100
// figure sacreBLEU prints.
absl::StatusOr<BleuScore> SacreBleu(absl::Span<const std::string> hypotheses,
                                    absl::Span<const std::string> references);

}  // namespace tessera::jobs::nmt
