// Greedy and beam-search decoding with a causal model: jobs/nmt/beam_decoder.h.
#include "tessera/jobs/nmt/beam_decoder.h"

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;

constexpr int64_t kEos = Vocabulary::kEos;
constexpr int64_t kClasses = 12;

// A fake causal model over kClasses ids: `next(sentence, prefix)` gives the probabilities of
// the next id after `prefix` (the ids after <bos>) for the sentence whose src_tokens row
// starts with `sentence`; ids it leaves out get 1e-6. It counts its passes, and fails the test
// if passes do not go t = 0, 1, 2, ... (each group of sentences from 0), or show any token
// after position t, or a row that does not start with <bos>.
using NextFn = std::function<std::map<int64_t, double>(int64_t sentence, const Ints& prefix)>;

StepLogitsFn FakeModel(int64_t batch, int64_t length, NextFn next, int* passes) {
  auto last = std::make_shared<int64_t>(-1);
  auto before = std::make_shared<Ints>();  // the last pass's tgt_tokens
  return [=](const exec::Batch& b, int64_t t,
             absl::Span<const int64_t> parents) -> absl::StatusOr<std::vector<float>> {
    const Ints& tokens = std::get<Ints>(b.values.at("tgt_tokens"));
    const Ints& src = std::get<Ints>(b.values.at("src_tokens"));
    EXPECT_TRUE(t == 0 || t == *last + 1) << "pass at " << t << " after " << *last;
    *last = t;
    // Each row continues its parent: its ids before position t are the parent's of pass t - 1.
    EXPECT_EQ(parents.size(), static_cast<size_t>(batch));
    for (int64_t r = 0; r < batch && r < static_cast<int64_t>(parents.size()); ++r) {
      if (t == 0) {
        EXPECT_EQ(parents[r], r);
        continue;
      }
      EXPECT_TRUE(std::equal(tokens.begin() + r * length, tokens.begin() + r * length + t,
                             before->begin() + parents[r] * length))
          << "pass " << t << ": row " << r << " does not continue row " << parents[r];
    }
    *before = tokens;
    std::vector<float> logits(batch * kClasses);
    for (int64_t r = 0; r < batch; ++r) {
      EXPECT_EQ(tokens[r * length], Vocabulary::kBos) << "row " << r;
      for (int64_t i = t + 1; i < length; ++i) {
        EXPECT_EQ(tokens[r * length + i], Vocabulary::kPad) << "row " << r << " t " << i;
      }
      const Ints prefix(tokens.begin() + r * length + 1, tokens.begin() + r * length + t + 1);
      std::map<int64_t, double> p = next(src[r * length], prefix);
      for (int64_t c = 0; c < kClasses; ++c) {
        logits[r * kClasses + c] = static_cast<float>(std::log(p.count(c) ? p[c] : 1e-6));
      }
    }
    ++*passes;
    return logits;
  };
}

// Sentence s of `batch`: src_tokens rows start with s.
exec::Batch Inputs(int64_t batch, int64_t length) {
  exec::Batch in;
  in.Ints("tgt_tokens").assign(batch * length, 42);  // replaced by the decoder
  Ints& src = in.Ints("src_tokens");
  src.assign(batch * length, 7);
  for (int64_t s = 0; s < batch; ++s) src[s * length] = s;
  in.Floats("src_mask").assign(batch * length, 0.f);
  return in;
}

// Greedy: position t predicts 5 + s after <bos>, else the fed id + 1, and <eos> once that
// would reach 8.
TEST(DecodeTest, GreedyFeedsPredictionsBackUntilEos) {
  const int64_t batch = 3, length = 6;
  int passes = 0;
  auto counting = [](int64_t s, const Ints& prefix) -> std::map<int64_t, double> {
    const int64_t next = prefix.empty() ? 5 + s : prefix.back() + 1;
    return {{next >= 8 ? kEos : next, 0.9}};
  };
  absl::StatusOr<std::vector<Ints>> rows = Decode(Inputs(batch, length), batch, length, {},
                                                  FakeModel(batch, length, counting, &passes));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT((*rows)[0], ElementsAre(5, 6, 7, kEos));
  EXPECT_THAT((*rows)[1], ElementsAre(6, 7, kEos));
  EXPECT_THAT((*rows)[2], ElementsAre(7, kEos));
  EXPECT_EQ(passes, 4);  // stops once every row has its <eos>
}

// After <bos>: 5 (0.55) or 6 (0.45); after 5: 7 (0.34), 8 or 9 (0.33 each); after 6: <eos>
// (0.9); after 7, 8 or 9: <eos>. Greedy takes 5 7 <eos> (p 0.187); the likelier sentence is
// 6 <eos> (p 0.405). Sentence 1 prefers 6 from the start, so both agree on it.
std::map<int64_t, double> Trap(int64_t s, const Ints& prefix) {
  if (prefix.empty()) return s == 1 ? std::map<int64_t, double>{{5, 0.2}, {6, 0.8}}
                                    : std::map<int64_t, double>{{5, 0.55}, {6, 0.45}};
  if (prefix.back() == 5) return {{7, 0.34}, {8, 0.33}, {9, 0.33}};
  if (prefix.back() == 6) return {{kEos, 0.9}, {10, 0.1}};
  return {{kEos, 1.0}};
}

TEST(DecodeTest, BeamFindsTheLikelierSentenceThatGreedyMisses) {
  const int64_t batch = 4, length = 5;
  int passes = 0;
  absl::StatusOr<std::vector<Ints>> greedy =
      Decode(Inputs(batch, length), batch, length, {.beam = 1},
             FakeModel(batch, length, Trap, &passes));
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  EXPECT_THAT((*greedy)[0], ElementsAre(5, 7, kEos));
  EXPECT_THAT((*greedy)[1], ElementsAre(6, kEos));
  // Beam 2 on a batch of 4: two groups of two sentences, two rows each; each group needs two
  // passes (after 6 <eos>, nothing live can beat it).
  passes = 0;
  absl::StatusOr<std::vector<Ints>> beam = Decode(Inputs(batch, length), batch, length,
                                                  {.beam = 2},
                                                  FakeModel(batch, length, Trap, &passes));
  ASSERT_TRUE(beam.ok()) << beam.status();
  ASSERT_EQ(beam->size(), 4u);
  EXPECT_EQ(passes, 4);
  EXPECT_THAT((*beam)[0], ElementsAre(6, kEos));
  EXPECT_THAT((*beam)[1], ElementsAre(6, kEos));
  EXPECT_THAT((*beam)[2], ElementsAre(6, kEos));
  EXPECT_THAT((*beam)[3], ElementsAre(6, kEos));
  // Beam 3 does not divide the batch: one sentence per group, the other rows repeat it.
  absl::StatusOr<std::vector<Ints>> three = Decode(Inputs(batch, length), batch, length,
                                                   {.beam = 3},
                                                   FakeModel(batch, length, Trap, &passes));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(*three, *beam);
}

// After <bos>: <eos> (0.40), 5 (0.35), 6 (0.25); after 5: 7 (0.9) or 8; after 6: 10 (0.9) or
// 11; then <eos> (after 7: 0.9). By log-probability alone <eos> (0.40) beats 5 7 <eos> (0.28);
// normalised by lp(n) with alpha 2, the longer one wins (-1.26 / (8/6)^2 = -0.71 > -0.92).
std::map<int64_t, double> ShortOrLong(int64_t, const Ints& prefix) {
  if (prefix.empty()) return {{kEos, 0.40}, {5, 0.35}, {6, 0.25}};
  if (prefix.back() == 5) return {{7, 0.9}, {8, 0.1}};
  if (prefix.back() == 6) return {{10, 0.9}, {11, 0.1}};
  if (prefix.back() == 7) return {{kEos, 0.9}, {9, 0.1}};
  return {{kEos, 1.0}};
}

TEST(DecodeTest, LengthPenaltyDecidesBetweenShortAndLongHypotheses) {
  const int64_t batch = 2, length = 6;
  int passes = 0;
  auto decode = [&](double alpha) {
    passes = 0;
    return Decode(Inputs(batch, length), batch, length, {.beam = 2, .length_penalty = alpha},
                  FakeModel(batch, length, ShortOrLong, &passes));
  };
  absl::StatusOr<std::vector<Ints>> plain = decode(0);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT((*plain)[0], ElementsAre(kEos));
  // With alpha 0 no live hypothesis can beat the finished <eos> after the first pass: one pass
  // for each sentence (a group each).
  EXPECT_EQ(passes, 2);
  absl::StatusOr<std::vector<Ints>> normalised = decode(2);
  ASSERT_TRUE(normalised.ok()) << normalised.status();
  EXPECT_THAT((*normalised)[0], ElementsAre(5, 7, kEos));
  EXPECT_EQ(passes, 6);  // 5 7 <eos> and 6 10 <eos> finish at each sentence's third pass
}

// A model that loops: after <bos> 5, then 6 after 5, 5 after 6 (0.6), with 7 (0.3) and <eos>
// (0.1) as the alternatives. Barring a repeated bigram, the decode cannot go 5 6 5 6: after
// 5 6 5 the 6 is barred and 7 follows.
std::map<int64_t, double> Loop(int64_t, const Ints& prefix) {
  if (prefix.empty()) return {{5, 0.9}, {kEos, 0.1}};
  if (prefix.back() == 5) return {{6, 0.6}, {7, 0.3}, {kEos, 0.1}};
  if (prefix.back() == 6) return {{5, 0.6}, {7, 0.3}, {kEos, 0.1}};
  return {{kEos, 0.9}, {5, 0.1}};
}

TEST(DecodeTest, NoRepeatNgramBarsTheIdThatWouldRepeatOne) {
  const int64_t batch = 2, length = 8;
  int passes = 0;
  absl::StatusOr<std::vector<Ints>> loops =
      Decode(Inputs(batch, length), batch, length, {}, FakeModel(batch, length, Loop, &passes));
  ASSERT_TRUE(loops.ok()) << loops.status();
  EXPECT_THAT((*loops)[0], ElementsAre(5, 6, 5, 6, 5, 6, 5, 6));
  absl::StatusOr<std::vector<Ints>> barred =
      Decode(Inputs(batch, length), batch, length, {.no_repeat_ngram = 2},
             FakeModel(batch, length, Loop, &passes));
  ASSERT_TRUE(barred.ok()) << barred.status();
  EXPECT_THAT((*barred)[0], ElementsAre(5, 6, 5, 7, kEos));
  // Beam 2 finds 5 7 <eos> (p 0.24) either way, which repeats nothing.
  for (int64_t n : {0, 2}) {
    absl::StatusOr<std::vector<Ints>> beam =
        Decode(Inputs(batch, length), batch, length, {.beam = 2, .no_repeat_ngram = n},
               FakeModel(batch, length, Loop, &passes));
    ASSERT_TRUE(beam.ok()) << beam.status();
    EXPECT_THAT((*beam)[0], ElementsAre(5, 7, kEos)) << "n " << n;
  }
  // n = 1: no id twice.
  absl::StatusOr<std::vector<Ints>> once =
      Decode(Inputs(batch, length), batch, length, {.no_repeat_ngram = 1},
             FakeModel(batch, length, Loop, &passes));
  ASSERT_TRUE(once.ok()) << once.status();
  EXPECT_THAT((*once)[0], ElementsAre(5, 6, 7, kEos));
}

TEST(DecodeTest, StopsAtLengthAndReportsBadInput) {
  int passes = 0;
  auto never_ends = [](int64_t, const Ints&) -> std::map<int64_t, double> { return {{9, 1}}; };
  EXPECT_THAT(Decode(Inputs(1, 4), 1, 4, {}, FakeModel(1, 4, never_ends, &passes))->at(0),
              ElementsAre(9, 9, 9, 9));
  passes = 0;
  EXPECT_THAT(Decode(Inputs(2, 4), 2, 4, {.beam = 2}, FakeModel(2, 4, never_ends, &passes))
                  ->at(0),
              ElementsAre(9, 9, 9, 9));
  const StepLogitsFn any = FakeModel(1, 4, never_ends, &passes);
  EXPECT_THAT(Decode(Inputs(1, 4), 2, 4, {}, any).status().message(),
              HasSubstr("tgt_tokens as 2 x 4"));
  EXPECT_THAT(Decode(Inputs(2, 4), 2, 4, {.beam = 3}, any).status().message(),
              HasSubstr("beam 3 must be in [1, 2]"));
  EXPECT_THAT(Decode(Inputs(2, 4), 2, 4, {.beam = 0}, any).status().message(),
              HasSubstr("beam 0"));
  EXPECT_THAT(Decode(Inputs(2, 4), 2, 4, {.length_penalty = -1}, any).status().message(),
              HasSubstr("length penalty -1"));
  EXPECT_THAT(Decode(Inputs(2, 4), 2, 4, {.no_repeat_ngram = -1}, any).status().message(),
              HasSubstr("n-gram size -1"));
  exec::Batch ragged = Inputs(2, 4);
  ragged.Ints("src_lengths").assign(3, 1);
  EXPECT_THAT(Decode(ragged, 2, 4, {}, any).status().message(),
              HasSubstr("input 'src_lengths' of 3 values is not 2 rows"));
  const StepLogitsFn short_output = [](const exec::Batch&, int64_t,
                                       absl::Span<const int64_t>)
      -> absl::StatusOr<std::vector<float>> {
    return std::vector<float>(3, 0.f);
  };
  EXPECT_THAT(Decode(Inputs(2, 4), 2, 4, {}, short_output).status().message(),
              HasSubstr("gave 3 logits for 2 rows"));
  const StepLogitsFn failing = [](const exec::Batch&, int64_t,
                                  absl::Span<const int64_t>) -> absl::StatusOr<std::vector<float>> {
    return absl::InternalError("model broke");
  };
  EXPECT_THAT(Decode(Inputs(1, 4), 1, 4, {}, failing).status().message(),
              HasSubstr("model broke"));
}

}  // namespace
}  // namespace tessera::jobs::nmt
