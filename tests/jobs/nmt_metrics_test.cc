// The NMT example's metrics: jobs/nmt/metrics.h.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/jobs/nmt/metrics.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Words(const char* s) { return absl::StrSplit(s, ' '); }

TEST(TokenAccuracyTest, CountsOnlyNonPadPositions) {
  TokenAccuracy acc;
  //                  labels: 7 8 2 0 0 | 9 2 0 0 0 ; predictions right at 7, 2, 9 and on pads
  ASSERT_TRUE(acc.Add({7, 5, 2, 0, 4, 9, 3, 0, 0, 0}, {7, 8, 2, 0, 0, 9, 2, 0, 0, 0}).ok());
  EXPECT_EQ(acc.total, 5);
  EXPECT_EQ(acc.correct, 3);
  EXPECT_DOUBLE_EQ(acc.Value(), 0.6);
  ASSERT_TRUE(acc.Add({1}, {1}).ok());  // accumulates
  EXPECT_DOUBLE_EQ(acc.Value(), 4.0 / 6.0);
  EXPECT_THAT(acc.Add({1, 2}, {1}).message(), HasSubstr("2 predictions for 1 labels"));
  EXPECT_EQ(TokenAccuracy{}.Value(), 0.0);
}

TEST(PredictedIdsTest, ArgmaxOfTimeMajorRowsInBatchMajorOrder) {
  // batch 2, length 3, classes 4: row t*2+b has its maximum at class (10*b + t) % 4.
  const int64_t batch = 2, length = 3, classes = 4;
  std::vector<float> logits(batch * length * classes, -1.f);
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t b = 0; b < batch; ++b) logits[(t * batch + b) * classes + (10 * b + t) % 4] = 3.f;
  }
  absl::StatusOr<std::vector<int64_t>> ids = PredictedIds(logits, batch, length, classes);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ElementsAre(0, 1, 2, 2, 3, 0));
  EXPECT_THAT(PredictedIds(logits, 3, length, classes).status().message(), HasSubstr("24"));
  EXPECT_THAT(*ArgmaxRows({1.f, 5.f, 5.f, -2.f, -1.f, -3.f}, 3), ElementsAre(1, 1));  // ties: first
  EXPECT_FALSE(ArgmaxRows({1.f, 2.f}, 3).ok());
}

// Hand-computed corpus BLEU: pair 1 is "the cat sat on the mat" against "the cat is on the mat"
// (matches 5/6 unigrams, 3/5 bigrams, 1/4 trigrams, 0/3 4-grams), pair 2 "a b c d" against itself
// (4/4, 3/3, 2/2, 1/1). Corpus: p = 9/10, 6/8, 3/6, 1/4; c = r = 10, BP = 1;
// BLEU = (0.9 * 0.75 * 0.5 * 0.25)^(1/4) = 0.538956...
TEST(BleuTest, MatchesAHandComputedCorpus) {
  absl::StatusOr<BleuScore> s =
      CorpusBleu({Words("the cat sat on the mat"), Words("a b c d")},
                 {Words("the cat is on the mat"), Words("a b c d")});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->precisions, ElementsAre(0.9, 0.75, 0.5, 0.25));
  EXPECT_EQ(s->hypothesis_length, 10);
  EXPECT_EQ(s->reference_length, 10);
  EXPECT_DOUBLE_EQ(s->brevity_penalty, 1.0);
  EXPECT_THAT(s->bleu, DoubleNear(0.5389561679446263, 1e-12));
  // The first pair alone has no matching 4-gram: BLEU 0 (no smoothing).
  EXPECT_EQ(CorpusBleu({Words("the cat sat on the mat")}, {Words("the cat is on the mat")})->bleu,
            0.0);
}

TEST(BleuTest, ClipsRepeatedWordsAndPenalisesShortOutput) {
  // Papineni et al.'s example: 7 x "the" against a reference with 2 -> p1 = 2/7.
  BleuAccumulator clip;
  clip.Add(Words("the the the the the the the"), Words("the cat is on the mat"));
  EXPECT_DOUBLE_EQ(clip.Score().precisions[0], 2.0 / 7.0);
  // Every n-gram right but 4 words for 6: BP = exp(1 - 6/4).
  BleuScore brief = *CorpusBleu({Words("a b c d")}, {Words("a b c d e f")});
  EXPECT_DOUBLE_EQ(brief.brevity_penalty, std::exp(-0.5));
  EXPECT_DOUBLE_EQ(brief.bleu, std::exp(-0.5));
  // Longer than the reference: no penalty, precision pays instead (4/5, 3/4, 2/3, 1/2).
  BleuScore longer = *CorpusBleu({Words("a b c d x")}, {Words("a b c d")});
  EXPECT_DOUBLE_EQ(longer.brevity_penalty, 1.0);
  EXPECT_NEAR(longer.bleu, std::pow(0.8 * 0.75 * (2.0 / 3.0) * 0.5, 0.25), 1e-12);
  EXPECT_EQ(CorpusBleu({}, {})->bleu, 0.0);
  EXPECT_THAT(CorpusBleu({Words("a")}, {}).status().message(), HasSubstr("1 hypotheses for 0"));
}

// Expected outputs checked by hand against the rules in metrics.h and against sacreBLEU's own
// Tokenizer13a (sacrebleu/tokenizers/tokenizer_13a.py).
TEST(Tokenize13aTest, SplitsPunctuationButNotInsideNumbers) {
  EXPECT_EQ(Tokenize13a("Hello, world!"), "Hello , world !");
  // $ and % are punctuation; the comma and period between digits stay, the others split.
  EXPECT_EQ(Tokenize13a("It costs $3,000.50, or 3.5%."), "It costs $ 3,000.50 , or 3.5 % .");
  // A period or comma splits unless a digit is on its side of the rule: ".5" -> ". 5".
  EXPECT_EQ(Tokenize13a("5,5 .5 5. ,5 a,b"), "5,5 . 5 5 . , 5 a , b");
  EXPECT_EQ(Tokenize13a("a..b"), "a . . b");
  EXPECT_EQ(Tokenize13a("1990-2000 well-known e.g. U.S.A."),
            "1990 - 2000 well-known e . g . U . S . A .");
  // A dash splits only after a digit; apostrophes never split.
  EXPECT_EQ(Tokenize13a("x-1 1-x 3.14. -5"), "x-1 1 - x 3.14 . -5");
  EXPECT_EQ(Tokenize13a("He said: 'don't'."), "He said : 'don't' .");
  EXPECT_EQ(Tokenize13a("(text) [x] {y} a/b a|b ~#@^_`"),
            "( text ) [ x ] { y } a / b a | b ~ # @ ^ _ `");
}

TEST(Tokenize13aTest, UnescapesEntitiesJoinsHyphensAndCollapsesSpace) {
  EXPECT_EQ(Tokenize13a("Hello, world: 3.5-4 &amp; more."), "Hello , world : 3.5 - 4 & more .");
  EXPECT_EQ(Tokenize13a("&quot;Quoted&quot;"), "\" Quoted \"");
  // The four replacements run in turn: "&amp;lt;" becomes "&lt;", then "<".
  EXPECT_EQ(Tokenize13a("&amp;lt;b&amp;gt; x"), "< b > x");
  // Only those four: others are punctuation like any.
  EXPECT_EQ(Tokenize13a("&amp;amp; &AMP; &#39;"), "& amp ; & AMP ; & # 39 ;");
  EXPECT_EQ(Tokenize13a("foo-\nbar <skipped> x\ny"), "foobar x y");
  // Non-ASCII text passes through; Unicode white space (no-break, ideographic) separates.
  EXPECT_EQ(Tokenize13a("\xC3\x87" "a va, \xC2\xBFqu\xC3\xA9 tal?"),
            "\xC3\x87" "a va , \xC2\xBFqu\xC3\xA9 tal ?");
  EXPECT_EQ(Tokenize13a("a\xC2\xA0" "b\tc\xE3\x80\x80" "d \xE2\x80\x83 e"), "a b c d e");
  EXPECT_EQ(Tokenize13a("  "), "");
  EXPECT_THAT(Words13a(" The mat. "), ElementsAre("The", "mat", "."));
  EXPECT_THAT(Words13a(""), ElementsAre());
}

// Hand-computed, and what `sacrebleu -tok 13a -s none` prints for the same lines (54.91):
//   "The cat sat on the mat." vs "The cat is on the mat."  -> 7 tokens each ("mat ."):
//     matches 6/7 unigrams, 4/6 bigrams, 2/5 trigrams, 1/4 4-grams;
//   "It costs $3,000.50, doesn't it?" vs "It costs $3,000.50, does it?" -> 8 tokens each
//     ("$ 3,000.50 , doesn't it ?"): 7/8, 5/7, 3/6, 2/5.
//   Corpus: p = 13/15, 9/13, 5/11, 3/9; c = r = 15, BP = 1;
//   BLEU = (13/15 * 9/13 * 5/11 * 1/3)^(1/4) = (1/11)^(1/4) = 0.549100...
TEST(SacreBleuTest, MatchesAHandComputedCorpus) {
  const std::vector<std::string> hypotheses = {"The cat sat on the mat.",
                                               "It costs $3,000.50, doesn't it?"};
  const std::vector<std::string> references = {"The cat is on the mat.",
                                               "It costs $3,000.50, does it?"};
  absl::StatusOr<BleuScore> s = SacreBleu(hypotheses, references);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->hypothesis_length, 15);
  EXPECT_EQ(s->reference_length, 15);
  EXPECT_DOUBLE_EQ(s->precisions[0], 13.0 / 15);
  EXPECT_DOUBLE_EQ(s->precisions[1], 9.0 / 13);
  EXPECT_DOUBLE_EQ(s->precisions[2], 5.0 / 11);
  EXPECT_DOUBLE_EQ(s->precisions[3], 3.0 / 9);
  EXPECT_NEAR(s->bleu, std::pow(1.0 / 11, 0.25), 1e-12);
  EXPECT_NEAR(s->Points(), 54.91004867761124, 1e-9);
  // The first pair alone: (6/7 * 4/6 * 2/5 * 1/4)^(1/4) = 48.89 points. Split on spaces only,
  // "mat." is one word and no 4-gram matches: tokenisation decides the score.
  EXPECT_NEAR(SacreBleu({hypotheses[0]}, {references[0]})->Points(),
              100 * std::pow(6.0 / 7 * 4 / 6 * 2 / 5 / 4, 0.25), 1e-9);
  EXPECT_EQ(CorpusBleu({Words("The cat sat on the mat.")}, {Words("The cat is on the mat.")})->bleu,
            0.0);
}

TEST(SacreBleuTest, StripsTrailingSpaceFirstAndChecksCounts) {
  // sacreBLEU right-strips each line before tokenising: "foo-\n" stays "foo-", not "foo".
  EXPECT_EQ(Tokenize13a("foo-\n"), "foo");
  EXPECT_EQ(SacreBleu({"foo-\n"}, {"foo"})->bleu, 0.0);
  EXPECT_DOUBLE_EQ(SacreBleu({"a b, c d.  \n"}, {"a b , c d ."})->Points(), 100.0);
  // Shorter than the reference: BP = exp(1 - 6/5) on "a b c d ." against "a b c d e .".
  BleuScore brief = *SacreBleu({"a b c d."}, {"a b c d e."});
  EXPECT_EQ(brief.hypothesis_length, 5);
  EXPECT_DOUBLE_EQ(brief.brevity_penalty, std::exp(1.0 - 6.0 / 5.0));
  EXPECT_THAT(SacreBleu({"a", "b"}, {"a"}).status().message(),
              HasSubstr("2 hypotheses for 1 references"));
  EXPECT_EQ(SacreBleu({}, {})->Points(), 0.0);
}

}  // namespace
}  // namespace tessera::jobs::nmt
