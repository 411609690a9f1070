// Greedy CTC decoding on hand-made log_probs, edit distance and the accuracy measures.
#include "tessera/jobs/ocr/ctc_decode.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "tessera/jobs/ocr/bitmap_font.h"

namespace tessera::jobs::ocr {
namespace {

// log_probs [T, B, C] whose argmax at (t, b) is best[b][t]: -0.1 there, -5 elsewhere.
std::vector<float> Peaks(const std::vector<std::vector<int64_t>>& best, int64_t classes) {
  const int64_t batch = best.size(), frames = best[0].size();
  std::vector<float> lp(frames * batch * classes, -5.f);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < frames; ++t) lp[(t * batch + b) * classes + best[b][t]] = -0.1f;
  }
  return lp;
}

TEST(OcrCtcDecodeTest, CollapsesRepeatsAndDropsBlanks) {
  const int64_t A = LabelOf('A'), B = LabelOf('B'), k7 = LabelOf('7');
  const std::vector<std::vector<int64_t>> best = {
      {A, A, 0, B, B, B, 0, 0},     // "AB"
      {A, 0, A, A, 0, 0, A, 0},     // blanks separate equal labels: "AAA"
      {0, 0, 0, 0, 0, 0, 0, 0},     // nothing
      {k7, k7, k7, k7, k7, k7, k7, k7},  // one long run: "7"
      {0, B, 0, A, B, 0, B, B},     // B, A, B, blank, B B -> "BABB"
  };
  absl::StatusOr<std::vector<std::string>> texts = GreedyCtcDecode(Peaks(best, kClasses), 8, 5,
                                                                   kClasses);
  ASSERT_TRUE(texts.ok()) << texts.status();
  EXPECT_EQ(*texts, (std::vector<std::string>{"AB", "AAA", "", "7", "BABB"}));

  absl::StatusOr<std::vector<std::vector<int64_t>>> labels =
      GreedyCtcLabels(Peaks(best, kClasses), 8, 5, kClasses);
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ((*labels)[0], (std::vector<int64_t>{A, B}));
  EXPECT_TRUE((*labels)[2].empty());
}

TEST(OcrCtcDecodeTest, ANonZeroBlankIsHonouredAndTiesTakeTheFirstClass) {
  // Classes {0, 1, 2}, blank 2; frame 1 ties classes 0 and 1 -> 0.
  const std::vector<float> lp = {-0.1f, -3.f, -3.f,   // t0: 0
                                 -1.f, -1.f, -2.f,    // t1: tie -> 0 (repeat)
                                 -3.f, -3.f, -0.1f,   // t2: blank
                                 -3.f, -0.2f, -3.f};  // t3: 1
  absl::StatusOr<std::vector<std::vector<int64_t>>> labels = GreedyCtcLabels(lp, 4, 1, 3, 2);
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ((*labels)[0], (std::vector<int64_t>{0, 1}));
}

TEST(OcrCtcDecodeTest, EachSampleReadsOnlyItsInputLengthsFrames) {
  // Classes {0 blank, 1, 2}; 3 frames, batch 2: sample 0 reads 1, 2, 1; sample 1 reads 2, 2, 1.
  const std::vector<float> lp = {-3.f, -0.1f, -3.f, -3.f, -3.f, -0.1f,   // t0
                                 -3.f, -3.f, -0.1f, -3.f, -3.f, -0.1f,   // t1
                                 -3.f, -0.1f, -3.f, -3.f, -0.1f, -3.f};  // t2
  const std::vector<int64_t> lengths = {2, 3};
  absl::StatusOr<std::vector<std::vector<int64_t>>> labels =
      GreedyCtcLabels(lp, 3, 2, 3, 0, lengths);
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ((*labels)[0], (std::vector<int64_t>{1, 2}));     // frame 2 left out
  EXPECT_EQ((*labels)[1], (std::vector<int64_t>{2, 1}));     // all 3 frames
  EXPECT_EQ((*GreedyCtcLabels(lp, 3, 2, 3))[0], (std::vector<int64_t>{1, 2, 1}));
  const std::vector<int64_t> too_long = {2, 4}, too_few = {2};
  absl::Status s = GreedyCtcLabels(lp, 3, 2, 3, 0, too_long).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "each in [0, 3]")) << s;
  EXPECT_FALSE(GreedyCtcLabels(lp, 3, 2, 3, 0, too_few).ok());
}

TEST(OcrCtcDecodeTest, WrongSizesAreRejectedWithTheSizes) {
  const std::vector<float> lp(10, 0.f);
  absl::Status s = GreedyCtcDecode(lp, 32, 2, 37).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "10 values")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "frames (32)")) << s;
  EXPECT_FALSE(GreedyCtcLabels({}, 0, 1, 1).ok());
}

TEST(OcrCtcDecodeTest, EditDistanceCountsInsertionsDeletionsSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0);
  EXPECT_EQ(EditDistance("ABC", ""), 3);
  EXPECT_EQ(EditDistance("", "XY"), 2);
  EXPECT_EQ(EditDistance("KITTEN", "SITTING"), 3);
  EXPECT_EQ(EditDistance("SITTING", "KITTEN"), 3);
  EXPECT_EQ(EditDistance("AB12", "AB12"), 0);
  EXPECT_EQ(EditDistance("AB12", "A12"), 1);
  EXPECT_EQ(EditDistance("FLAW", "LAWN"), 2);
}

TEST(OcrCtcDecodeTest, AccuracySumsOverTheSplit) {
  OcrAccuracy acc;
  EXPECT_EQ(acc.CharAccuracy(), 0.0);
  EXPECT_EQ(acc.LineAccuracy(), 0.0);
  acc.Add("HELLO", "HELLO");   // 0 errors
  acc.Add("AB12", "A12");      // 1
  acc.Add("XYZ", "XQZW");      // 2
  acc.Add("Q", "");            // 1
  EXPECT_EQ(acc.reference_chars, 13);
  EXPECT_EQ(acc.char_errors, 4);
  EXPECT_EQ(acc.lines, 4);
  EXPECT_EQ(acc.lines_correct, 1);
  EXPECT_DOUBLE_EQ(acc.CharAccuracy(), 1.0 - 4.0 / 13.0);
  EXPECT_DOUBLE_EQ(acc.LineAccuracy(), 0.25);
  OcrAccuracy garbage;
  garbage.Add("A", "XYZW");  // more errors than characters: floored at 0
  EXPECT_EQ(garbage.CharAccuracy(), 0.0);
}

}  // namespace
}  // namespace tessera::jobs::ocr
