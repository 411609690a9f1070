// The NMT example's task and tokenizer: jobs/nmt/number_language.h, vocabulary.h.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/jobs/nmt/number_language.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string English(int64_t n) { return absl::StrJoin(*EnglishWords(n), " "); }
std::string German(int64_t n) { return absl::StrJoin(*GermanWords(n), " "); }

TEST(NumberLanguageTest, WritesKnownNumbers) {
  EXPECT_EQ(English(0), "zero");
  EXPECT_EQ(German(0), "null");
  EXPECT_EQ(German(1), "eins");
  EXPECT_EQ(German(16), "sechzehn");
  EXPECT_EQ(English(21), "twenty one");
  EXPECT_EQ(German(21), "ein und zwanzig");
  EXPECT_EQ(German(70), "siebzig");
  EXPECT_EQ(English(101), "one hundred one");
  EXPECT_EQ(German(101), "ein hundert eins");
  EXPECT_EQ(German(1001), "ein tausend eins");
  EXPECT_EQ(English(11000), "eleven thousand");
  EXPECT_EQ(German(11000), "elf tausend");
  EXPECT_EQ(English(100000), "one hundred thousand");
  EXPECT_EQ(German(101000), "ein hundert ein tausend");
  EXPECT_EQ(English(312456), "three hundred twelve thousand four hundred fifty six");
  EXPECT_EQ(German(312456), "drei hundert zwoelf tausend vier hundert sechs und fuenfzig");
  EXPECT_EQ(German(999999),
            "neun hundert neun und neunzig tausend neun hundert neun und neunzig");
}

TEST(NumberLanguageTest, RejectsNumbersOutOfRange) {
  EXPECT_THAT(EnglishWords(-1).status().message(), HasSubstr("-1"));
  EXPECT_THAT(GermanWords(1000000).status().message(), HasSubstr("1000000"));
  EXPECT_THAT(GermanWords(1000000).status().message(), HasSubstr("999999"));
}

// Every number: at most 9 English and 11 German words (so 12 tokens with <bos>/<eos> fit the
// model's 20), only lexicon words, every lexicon word used, distinct sentences per number.
TEST(NumberLanguageTest, AllNumbersFitAndUseExactlyTheLexicon) {
  const std::set<std::string> en_lex(EnglishLexicon().begin(), EnglishLexicon().end());
  const std::set<std::string> de_lex(GermanLexicon().begin(), GermanLexicon().end());
  EXPECT_EQ(en_lex.size(), EnglishLexicon().size());
  EXPECT_EQ(de_lex.size(), GermanLexicon().size());
  std::set<std::string> en_used, de_used;
  absl::flat_hash_set<std::string> de_sentences;
  size_t en_max = 0, de_max = 0;
  for (int64_t n = 0; n <= kMaxNumber; ++n) {
    std::vector<std::string> en = *EnglishWords(n), de = *GermanWords(n);
    en_max = std::max(en_max, en.size());
    de_max = std::max(de_max, de.size());
    en_used.insert(en.begin(), en.end());
    de_used.insert(de.begin(), de.end());
    de_sentences.insert(absl::StrJoin(de, " "));
  }
  EXPECT_EQ(en_max, 9u);
  EXPECT_EQ(de_max, 11u);
  EXPECT_EQ(en_used, en_lex);
  EXPECT_EQ(de_used, de_lex);
  EXPECT_EQ(de_sentences.size(), static_cast<size_t>(kMaxNumber + 1));
}

TEST(NumberLanguageTest, ExamplesAreDeterministicAndSeeded) {
  for (int64_t i : {0, 1, 17, 123456}) {
    Example a = MakeExample(5, Split::kTrain, i), b = MakeExample(5, Split::kTrain, i);
    EXPECT_EQ(a.number, b.number);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.target, b.target);
    EXPECT_EQ(a.source, *EnglishWords(a.number));
    EXPECT_EQ(a.target, *GermanWords(a.number));
  }
  int differ = 0, short_numbers = 0;
  for (int64_t i = 0; i < 200; ++i) {
    differ += MakeExample(5, Split::kTrain, i).number != MakeExample(6, Split::kTrain, i).number;
    short_numbers += MakeExample(5, Split::kTrain, i).number < 100;
  }
  EXPECT_GT(differ, 190);
  // A third of the draws have 1 or 2 digits.
  EXPECT_GT(short_numbers, 40);
  EXPECT_LT(short_numbers, 95);
}

TEST(NumberLanguageTest, SplitsAreDisjointWhateverTheSeed) {
  std::set<int64_t> train, held_out;
  for (uint64_t seed : {0u, 1u, 99u}) {
    for (int64_t i = 0; i < 3000; ++i) {
      Example t = MakeExample(seed, Split::kTrain, i);
      Example h = MakeExample(seed, Split::kHeldOut, i);
      EXPECT_EQ(SplitOf(t.number), Split::kTrain);
      EXPECT_EQ(SplitOf(h.number), Split::kHeldOut);
      EXPECT_GE(h.number, 100);
      train.insert(t.number);
      held_out.insert(h.number);
    }
  }
  std::vector<int64_t> both;
  std::set_intersection(train.begin(), train.end(), held_out.begin(), held_out.end(),
                        std::back_inserter(both));
  EXPECT_THAT(both, ElementsAre());
  // 9,000 draws, a quarter of them among the ~90 held-out 3-digit numbers and a quarter among
  // the ~900 4-digit ones: about 90 + 830 + 2,100 + 2,250 distinct numbers.
  EXPECT_GT(held_out.size(), 4500u);
  EXPECT_LT(held_out.size(), 6000u);
  int64_t held = 0;
  for (int64_t n = 0; n <= kMaxNumber; ++n) held += SplitOf(n) == Split::kHeldOut;
  EXPECT_GT(held, 95000);  // about a tenth of 999,900
  EXPECT_LT(held, 105000);
  for (int64_t n = 0; n < 100; ++n) EXPECT_EQ(SplitOf(n), Split::kTrain) << n;
}

TEST(VocabularyTest, SpecialsComeFirstThenWordsInOrder) {
  absl::StatusOr<Vocabulary> v = Vocabulary::Create({"drei", "und"});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->size(), 6);
  EXPECT_EQ(v->Word(0), "<pad>");
  EXPECT_EQ(v->Word(1), "<bos>");
  EXPECT_EQ(v->Word(2), "<eos>");
  EXPECT_EQ(v->Word(3), "<unk>");
  EXPECT_EQ(v->Id("drei"), 4);
  EXPECT_EQ(v->Id("und"), 5);
  EXPECT_EQ(v->Id("vier"), Vocabulary::kUnk);
  EXPECT_EQ(v->Word(6), "<unk>");
  EXPECT_EQ(v->Word(-1), "<unk>");
}

TEST(VocabularyTest, RejectsBadWordLists) {
  EXPECT_THAT(Vocabulary::Create({"a", "b", "a"}).status().message(), HasSubstr("\"a\""));
  EXPECT_THAT(Vocabulary::Create({"a", "<eos>"}).status().message(), HasSubstr("<eos>"));
  EXPECT_THAT(Vocabulary::Create({"a", ""}).status().message(), HasSubstr("empty"));
  EXPECT_THAT(Vocabulary::Create({"a", "b"}, /*max_size=*/5).status().message(),
              HasSubstr("5"));
  EXPECT_TRUE(Vocabulary::Create({"a"}, /*max_size=*/5).ok());
}

TEST(VocabularyTest, EncodesToFixedLengthRows) {
  Vocabulary v = *Vocabulary::Create({"a", "b", "c"});  // a=4, b=5, c=6
  const std::vector<std::string> s = {"a", "b", "x"};
  EXPECT_THAT(*v.Encode(s, {.length = 6}), ElementsAre(4, 5, 3, 0, 0, 0));
  EXPECT_THAT(*v.Encode(s, {.length = 6, .bos = true}), ElementsAre(1, 4, 5, 3, 0, 0));
  EXPECT_THAT(*v.Encode(s, {.length = 6, .eos = true}), ElementsAre(4, 5, 3, 2, 0, 0));
  EXPECT_THAT(*v.Encode(s, {.length = 6, .reverse = true, .pad_left = true}),
              ElementsAre(0, 0, 0, 3, 5, 4));
  EXPECT_THAT(*v.Encode(s, {.length = 5, .bos = true, .eos = true}), ElementsAre(1, 4, 5, 3, 2));
  absl::Status too_long = v.Encode(s, {.length = 4, .bos = true, .eos = true}).status();
  EXPECT_THAT(too_long.message(), HasSubstr("\"a b x\""));
  EXPECT_THAT(too_long.message(), HasSubstr("4"));
}

TEST(VocabularyTest, DecodeStripsSpecialsAndStopsAtEos) {
  Vocabulary v = *Vocabulary::Create({"a", "b"});
  EXPECT_THAT(v.Decode({1, 4, 0, 5, 2, 4, 4}), ElementsAre("a", "b"));
  EXPECT_THAT(v.Decode({3, 1999, 4}), ElementsAre("<unk>", "<unk>", "a"));
  EXPECT_THAT(v.Decode({2, 4}), ElementsAre());
}

// Every German and English sentence survives encode -> decode in every layout.
TEST(VocabularyTest, RoundTripsTheTask) {
  Vocabulary en = *Vocabulary::Create(EnglishLexicon());
  Vocabulary de = *Vocabulary::Create(GermanLexicon());
  EXPECT_LT(en.size(), 2000);
  EXPECT_LT(de.size(), 2000);
  for (int64_t n = 0; n <= kMaxNumber; n += 997) {
    std::vector<std::string> e = *EnglishWords(n), g = *GermanWords(n);
    for (bool left : {false, true}) {
      EXPECT_EQ(en.Decode(*en.Encode(e, {.length = 20, .pad_left = left})), e) << n;
      EXPECT_EQ(de.Decode(*de.Encode(g, {.length = 20, .bos = true, .eos = true,
                                         .pad_left = left})),
                g)
          << n;
    }
    std::vector<std::string> reversed(e.rbegin(), e.rend());
    EXPECT_EQ(en.Decode(*en.Encode(e, {.length = 20, .reverse = true})), reversed) << n;
  }
}

}  // namespace
}  // namespace tessera::jobs::nmt
