// Synthetic text lines: deterministic per (seed, split, index), disjoint splits, text that fits.
#include "tessera/jobs/ocr/text_lines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tessera::jobs::ocr {
namespace {

TEST(OcrTextLinesTest, ALineDependsOnlyOnSeedSplitAndIndex) {
  TextLineGenerator a({.seed = 5}), b({.seed = 5}), other({.seed = 6});
  const TextLine first = a.Line(Split::kTrain, 77);
  b.Line(Split::kTrain, 3);  // other calls first change nothing
  const TextLine again = b.Line(Split::kTrain, 77);
  EXPECT_EQ(first.text, again.text);
  EXPECT_EQ(first.pixels, again.pixels);
  EXPECT_EQ(first.text, a.Text(Split::kTrain, 77));
  EXPECT_NE(first.pixels, a.Line(Split::kTrain, 78).pixels);
  EXPECT_NE(first.pixels, other.Line(Split::kTrain, 77).pixels);
}

TEST(OcrTextLinesTest, TextsAreOneToTenAlphabetCharactersOfEveryLength) {
  TextLineGenerator lines({.seed = 1});
  std::set<size_t> lengths;
  std::set<char> chars;
  for (int64_t i = 0; i < 2000; ++i) {
    const std::string t = lines.Text(Split::kTrain, i);
    ASSERT_GE(t.size(), 1u);
    ASSERT_LE(t.size(), static_cast<size_t>(kMaxTextLength));
    for (char c : t) ASSERT_GT(LabelOf(c), 0) << t;
    lengths.insert(t.size());
    chars.insert(t.begin(), t.end());
  }
  EXPECT_EQ(lengths.size(), 10u);
  EXPECT_EQ(chars.size(), 36u);
}

TEST(OcrTextLinesTest, HeldOutTextsNeverAppearInTraining) {
  TextLineGenerator lines({.seed = 2});
  std::set<std::string> train;
  for (int64_t i = 0; i < 20000; ++i) {
    const std::string t = lines.Text(Split::kTrain, i);
    EXPECT_FALSE(IsHeldOutText(t)) << t;
    train.insert(t);
  }
  int distinct = 0;
  std::set<std::string> held;
  for (int64_t i = 0; i < 500; ++i) {
    const std::string t = lines.Text(Split::kHeldOut, i);
    EXPECT_TRUE(IsHeldOutText(t)) << t;
    EXPECT_EQ(train.count(t), 0u) << t;
    distinct += held.insert(t).second;
  }
  EXPECT_GT(distinct, 400);  // only the short texts (length 1, 2) repeat
}

TEST(OcrTextLinesTest, GlyphsFitTheLineInOrderAndPixelsStayInRange) {
  TextLineGenerator lines({.seed = 3});
  for (int64_t i = 0; i < 300; ++i) {
    const TextLine line = lines.Line(i % 2 ? Split::kTrain : Split::kHeldOut, i);
    ASSERT_EQ(line.pixels.size(), static_cast<size_t>(kLineHeight * kLineWidth));
    ASSERT_EQ(line.glyphs.size(), line.text.size());
    for (float v : line.pixels) ASSERT_TRUE(v >= 0.f && v <= 1.f) << v;
    float right = 0;
    for (const GlyphBox& g : line.glyphs) {
      EXPECT_GE(g.x, right);  // left to right, no overlap
      EXPECT_GE(g.y, 0.f);
      EXPECT_LE(g.y + g.height, kLineHeight);
      EXPECT_GE(g.width, 6.f);    // at least 1.5 of the model's 4-pixel frames
      EXPECT_GE(g.height, 18.f);
      right = g.x + g.width;
    }
    EXPECT_LE(right, kLineWidth);
  }
}

TEST(OcrTextLinesTest, WithoutNoiseOnlyTheGlyphBoxesDifferFromTheBackground) {
  TextLineGenerator lines({.seed = 4, .noise = 0.f});
  const TextLine line = lines.Line(Split::kTrain, 9);
  const float background = line.pixels[0];
  EXPECT_LE(background, 0.15f);
  float brightest = 0;
  for (int y = 0; y < kLineHeight; ++y) {
    for (int x = 0; x < kLineWidth; ++x) {
      const float v = line.pixels[y * kLineWidth + x];
      brightest = std::max(brightest, v);
      bool in_box = false;
      for (const GlyphBox& g : line.glyphs) {
        in_box |= x + 1 > g.x && x < g.x + g.width && y + 1 > g.y && y < g.y + g.height;
      }
      if (!in_box) ASSERT_EQ(v, background) << x << "," << y;
    }
  }
  EXPECT_GE(brightest, 0.7f);  // ink is at least 0.7
  // With noise the same line differs, but only by noise.
  const TextLine noisy = TextLineGenerator({.seed = 4}).Line(Split::kTrain, 9);
  EXPECT_EQ(noisy.text, line.text);
  EXPECT_NE(noisy.pixels, line.pixels);
}

}  // namespace
}  // namespace tessera::jobs::ocr
