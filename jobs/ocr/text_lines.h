// Synthetic text lines for the OCR job: (seed, split, index) -> a random string of 1..10
// characters of kAlphabet and its [32, 128] grey image in [0, 1] (bright text on a dark,
// noisy background), with varying glyph size, spacing and offsets.
//
//   TextLineGenerator lines({.seed = 1});
//   TextLine a = lines.Line(Split::kTrain, 12345);      // a.text "7QX0", a.pixels 32*128
//   TextLine h = lines.Line(Split::kHeldOut, 0);        // never a text any train line has
//
// Determinism: a line depends only on (seed, split, index, noise), never on other calls.
// Splits: a text belongs to exactly one split, decided by a hash of the text (IsHeldOutText,
// about 1 text in 10 is held out), so the held-out split measures recognition of strings the
// model never saw. Within a split, lines are indexed 0, 1, 2, ...; the held-out split is
// evaluated on its first N indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tessera/jobs/ocr/bitmap_font.h"

namespace tessera::jobs::ocr {

inline constexpr int kMaxTextLength = 10;  // the ocr model's targets [B, 10]

enum class Split { kTrain, kHeldOut };

struct TextLineOptions {
  uint64_t seed = 0;
  float noise = 0.06f;  // standard deviation of the additive Gaussian noise
};

struct TextLine {
  std::string text;                // 1..kMaxTextLength characters of kAlphabet
  std::vector<float> pixels;       // [kLineHeight, kLineWidth] row-major, in [0, 1]
  std::vector<GlyphBox> glyphs;    // where each character was drawn, left to right
};

// True when `text` belongs to the held-out split.
bool IsHeldOutText(absl::string_view text);

class TextLineGenerator {
 public:
  explicit TextLineGenerator(const TextLineOptions& options = {});

  // The text of line `index` (>= 0) of `split`, without rendering it.
  std::string Text(Split split, int64_t index) const;
  // The line: its text, its image, its glyph boxes.
  TextLine Line(Split split, int64_t index) const;
  const TextLineOptions& options() const { return options_; }

 private:
  TextLineOptions options_;
};

}  // namespace tessera::jobs::ocr
