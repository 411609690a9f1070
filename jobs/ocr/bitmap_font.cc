#include "tessera/jobs/ocr/bitmap_font.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace tessera::jobs::ocr {
namespace {

// 5x7 glyphs, one byte per row (top first), bit 4 = leftmost column. Zero has a slash so it
// differs from O; one has a flag and a foot so it differs from I.
constexpr std::array<std::array<uint8_t, kGlyphHeight>, 36> kGlyphs = {{
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E},  // 0
    {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},  // 1
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F},  // 2
    {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},  // 3
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02},  // 4
    {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},  // 5
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E},  // 6
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},  // 7
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E},  // 8
    {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},  // 9
    {0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11},  // A
    {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E},  // B
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E},  // C
    {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C},  // D
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F},  // E
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10},  // F
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F},  // G
    {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11},  // H
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E},  // I
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C},  // J
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11},  // K
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F},  // L
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11},  // M
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11},  // N
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E},  // O
    {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10},  // P
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D},  // Q
    {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11},  // R
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E},  // S
    {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},  // T
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E},  // U
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04},  // V
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A},  // W
    {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11},  // X
    {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04},  // Y
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F},  // Z
}};

constexpr int kSamples = 4;  // super-samples per pixel side

}  // namespace

int64_t LabelOf(char c) {
  const size_t i = kAlphabet.find(c);
  return i == absl::string_view::npos ? 0 : static_cast<int64_t>(i) + 1;
}

char CharOfLabel(int64_t label) {
  if (label < 1 || label > static_cast<int64_t>(kAlphabet.size())) return '\0';
  return kAlphabet[label - 1];
}

uint8_t GlyphRow(char c, int y) {
  const int64_t label = LabelOf(c);
  if (label == 0 || y < 0 || y >= kGlyphHeight) return 0;
  return kGlyphs[label - 1][y];
}

bool GlyphPixel(char c, int x, int y) {
  if (x < 0 || x >= kGlyphWidth) return false;
  return (GlyphRow(c, y) >> (kGlyphWidth - 1 - x)) & 1;
}

void DrawGlyph(char c, const GlyphBox& box, float ink, absl::Span<float> image, int width,
               int height) {
  if (LabelOf(c) == 0 || box.width <= 0 || box.height <= 0) return;
  const int x0 = std::max(0, static_cast<int>(std::floor(box.x)));
  const int y0 = std::max(0, static_cast<int>(std::floor(box.y)));
  const int x1 = std::min(width, static_cast<int>(std::ceil(box.x + box.width)));
  const int y1 = std::min(height, static_cast<int>(std::ceil(box.y + box.height)));
  const float to_gx = kGlyphWidth / box.width, to_gy = kGlyphHeight / box.height;
  for (int py = y0; py < y1; ++py) {
    for (int px = x0; px < x1; ++px) {
      int covered = 0;
      for (int j = 0; j < kSamples; ++j) {
        const float gy = (py + (j + 0.5f) / kSamples - box.y) * to_gy;
        if (gy < 0 || gy >= kGlyphHeight) continue;
        for (int i = 0; i < kSamples; ++i) {
          const float gx = (px + (i + 0.5f) / kSamples - box.x) * to_gx;
          if (gx >= 0 && gx < kGlyphWidth &&
              GlyphPixel(c, static_cast<int>(gx), static_cast<int>(gy))) {
            ++covered;
          }
        }
      }
      if (covered == 0) continue;
      float& v = image[static_cast<size_t>(py) * width + px];
      v = std::max(v, ink * covered / (kSamples * kSamples));
    }
  }
}

absl::StatusOr<std::vector<float>> RenderText(absl::string_view text, const TextStyle& style) {
  for (char c : text) {
    if (LabelOf(c) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RenderText: character '", absl::string_view(&c, 1), "' of \"", text,
          "\" is not in the OCR alphabet ", kAlphabet, "; use digits and capital letters"));
    }
  }
  const float glyph_w = style.scale_x * kGlyphWidth, glyph_h = style.scale_y * kGlyphHeight;
  const float n = static_cast<float>(text.size());
  const float right = style.x + n * glyph_w + std::max(0.f, n - 1) * style.gap;
  if (style.x < 0 || style.y < 0 || right > kLineWidth || style.y + glyph_h > kLineHeight) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RenderText: \"", text, "\" at scale ", style.scale_x, "x", style.scale_y, " spans x [",
        style.x, ", ", right, ") y [", style.y, ", ", style.y + glyph_h, ") and does not fit the ",
        kLineWidth, "x", kLineHeight, " line; use fewer characters or a smaller scale"));
  }
  std::vector<float> image(static_cast<size_t>(kLineHeight) * kLineWidth, 0.f);
  float x = style.x;
  for (char c : text) {
    DrawGlyph(c, {.x = x, .y = style.y, .width = glyph_w, .height = glyph_h}, style.ink,
              absl::MakeSpan(image), kLineWidth, kLineHeight);
    x += glyph_w + style.gap;
  }
  return image;
}

}  // namespace tessera::jobs::ocr
