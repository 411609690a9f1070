// The OCR job's font: 36 hand-drawn 5x7 bitmap glyphs (0-9, A-Z), drawn scaled and
// anti-aliased into a grey-level text-line image.
//
//   std::vector<float> image(kLineHeight * kLineWidth, 0.f);   // [32, 128], row-major
//   DrawGlyph('A', {.x = 3, .y = 5, .width = 10, .height = 21}, /*ink=*/1.f, image,
//             kLineWidth, kLineHeight);
//   absl::StatusOr<std::vector<float>> line = RenderText("HELLO42", {});   // fixed layout
//   int64_t label = LabelOf('A');        // 11: CTC class, 0 is the blank
//   char c = CharOfLabel(label);         // 'A'
//
// The alphabet is kAlphabet, in that order: class k (1..36) is kAlphabet[k - 1]; class 0 is the
// CTC blank. That is the ocr zoo model's 37 classes (graph/zoo/ocr_small.cc).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessera::jobs::ocr {

inline constexpr absl::string_view kAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
inline constexpr int64_t kBlank = 0;
inline constexpr int64_t kClasses = 37;  // blank + 36 characters
inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
inline constexpr int kLineHeight = 32;   // the ocr model's image [B, 1, 32, 128]
inline constexpr int kLineWidth = 128;

// 1..36 for a character of kAlphabet, 0 (not a character) otherwise.
int64_t LabelOf(char c);
// The character of class 1..36; '\0' for the blank or anything out of range.
char CharOfLabel(int64_t label);
// Row y (0 = top) of a glyph as 5 bits, bit 4 the leftmost column; 0 for unknown characters.
uint8_t GlyphRow(char c, int y);
bool GlyphPixel(char c, int x, int y);

// Where a glyph's 5x7 cell lands in the image, in pixels (fractional positions allowed).
struct GlyphBox {
  float x = 0, y = 0;
  float width = 2 * kGlyphWidth, height = 3 * kGlyphHeight;
};

// Draws `c` into `image` ([height, width] row-major): each pixel takes the max of its value and
// ink * (the fraction of its area the glyph covers, 4x4 super-sampled). Pixels outside the
// image are clipped; nothing outside the box is touched. Unknown characters draw nothing.
void DrawGlyph(char c, const GlyphBox& box, float ink, absl::Span<float> image, int width,
               int height);

// A plain fixed layout: glyphs scaled by (scale_x, scale_y), `gap` pixels apart, starting at
// (x, y), on a background of 0.
struct TextStyle {
  float scale_x = 2.f, scale_y = 3.f, gap = 2.f, x = 1.f, y = 5.f, ink = 1.f;
};
// A [kLineHeight, kLineWidth] image of `text`. InvalidArgument naming the character when it is
// not in kAlphabet, or naming the text when it does not fit the 32x128 line.
absl::StatusOr<std::vector<float>> RenderText(absl::string_view text, const TextStyle& style);

}  // namespace tessera::jobs::ocr
