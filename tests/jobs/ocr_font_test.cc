// The OCR bitmap font: the alphabet's labels, distinct glyphs, exact and bounded rendering.
#include "tessera/jobs/ocr/bitmap_font.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/match.h"

namespace tessera::jobs::ocr {
namespace {

TEST(OcrFontTest, LabelsRoundTripAndBlankIsZero) {
  ASSERT_EQ(kAlphabet.size(), 36u);
  EXPECT_EQ(LabelOf('0'), 1);
  EXPECT_EQ(LabelOf('9'), 10);
  EXPECT_EQ(LabelOf('A'), 11);
  EXPECT_EQ(LabelOf('Z'), 36);
  EXPECT_EQ(LabelOf('a'), 0);
  EXPECT_EQ(LabelOf(' '), 0);
  for (int64_t k = 1; k <= 36; ++k) EXPECT_EQ(LabelOf(CharOfLabel(k)), k);
  EXPECT_EQ(CharOfLabel(kBlank), '\0');
  EXPECT_EQ(CharOfLabel(37), '\0');
}

TEST(OcrFontTest, GlyphsAreDistinctNonEmptyAndFiveBitsWide) {
  std::set<std::vector<uint8_t>> seen;
  for (char c : kAlphabet) {
    std::vector<uint8_t> rows;
    int ink = 0;
    for (int y = 0; y < kGlyphHeight; ++y) {
      rows.push_back(GlyphRow(c, y));
      EXPECT_EQ(GlyphRow(c, y) & ~0x1F, 0) << c;
      for (int x = 0; x < kGlyphWidth; ++x) ink += GlyphPixel(c, x, y);
    }
    EXPECT_GE(ink, 7) << c;
    EXPECT_TRUE(seen.insert(rows).second) << "glyph '" << c << "' duplicates another";
  }
  // Spot-check two drawings: T's bar and stem, L's stem and foot.
  EXPECT_EQ(GlyphRow('T', 0), 0x1F);
  for (int y = 1; y < kGlyphHeight; ++y) EXPECT_EQ(GlyphRow('T', y), 0x04);
  for (int y = 0; y < 6; ++y) EXPECT_EQ(GlyphRow('L', y), 0x10);
  EXPECT_EQ(GlyphRow('L', 6), 0x1F);
}

TEST(OcrFontTest, PixelAlignedGlyphReproducesTheBitmapExactly) {
  // Scale 2x3 at an integer position: each glyph cell covers whole pixels, so the image is
  // ink where the bit is set and 0 elsewhere.
  std::vector<float> image(kLineHeight * kLineWidth, 0.f);
  DrawGlyph('K', {.x = 4, .y = 3, .width = 10, .height = 21}, 0.8f, absl::MakeSpan(image),
            kLineWidth, kLineHeight);
  for (int y = 0; y < kLineHeight; ++y) {
    for (int x = 0; x < kLineWidth; ++x) {
      const bool inside = x >= 4 && x < 14 && y >= 3 && y < 24;
      const float expected = inside && GlyphPixel('K', (x - 4) / 2, (y - 3) / 3) ? 0.8f : 0.f;
      ASSERT_FLOAT_EQ(image[y * kLineWidth + x], expected) << x << "," << y;
    }
  }
}

TEST(OcrFontTest, FractionalGlyphStaysInItsBoxAndInRangeAndIsDeterministic) {
  const GlyphBox box{.x = 120.3f, .y = 20.6f, .width = 9.4f, .height = 19.7f};  // past both edges
  std::vector<float> a(kLineHeight * kLineWidth, 0.f), b = a;
  DrawGlyph('W', box, 1.f, absl::MakeSpan(a), kLineWidth, kLineHeight);
  DrawGlyph('W', box, 1.f, absl::MakeSpan(b), kLineWidth, kLineHeight);
  EXPECT_EQ(a, b);
  float total = 0;
  for (int y = 0; y < kLineHeight; ++y) {
    for (int x = 0; x < kLineWidth; ++x) {
      const float v = a[y * kLineWidth + x];
      ASSERT_GE(v, 0.f);
      ASSERT_LE(v, 1.f);
      if (x < 120 || y < 20) EXPECT_EQ(v, 0.f) << x << "," << y;
      total += v;
    }
  }
  EXPECT_GT(total, 5.f);  // the visible part drew something
  // Anti-aliasing: some pixel is partly covered.
  bool partial = false;
  for (float v : a) partial |= v > 0.f && v < 1.f;
  EXPECT_TRUE(partial);
}

TEST(OcrFontTest, RenderTextPlacesGlyphsAndRejectsBadText) {
  absl::StatusOr<std::vector<float>> line = RenderText("H1", {.x = 2, .y = 4});
  ASSERT_TRUE(line.ok()) << line.status();
  // 'H' at x [2, 12), '1' at [14, 24) (gap 2); rows [4, 25). The H's left stem is ink, the
  // gap column 12 is empty, nothing right of 24 or below 25.
  EXPECT_EQ((*line)[10 * kLineWidth + 2], 1.f);
  for (int y = 0; y < kLineHeight; ++y) {
    EXPECT_EQ((*line)[y * kLineWidth + 12], 0.f);
    for (int x = 24; x < kLineWidth; ++x) ASSERT_EQ((*line)[y * kLineWidth + x], 0.f);
  }
  for (int x = 0; x < kLineWidth; ++x) EXPECT_EQ((*line)[25 * kLineWidth + x], 0.f);

  absl::Status bad = RenderText("AB-C", {}).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.message(), "'-'")) << bad;
  absl::Status wide = RenderText("ABCDEFGHIJK", {}).status();  // 11 x 12 px > 128
  EXPECT_EQ(wide.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(wide.message(), "ABCDEFGHIJK")) << wide;
  EXPECT_TRUE(RenderText("ABCDEFGHIJ", {.gap = 1.5f}).ok());  // 10 glyphs fit
}

}  // namespace
}  // namespace tessera::jobs::ocr
