#include "tessera/jobs/ocr/text_lines.h"

#include <algorithm>
#include <cmath>

#include "tessera/base/hash.h"

namespace tessera::jobs::ocr {
namespace {

constexpr uint64_t kHeldOutBuckets = 10;  // 1 text in 10 is held out
constexpr float kMargin = 1.f;            // pixels kept free at each border

using base::Mix64;

// SplitMix64 stream: the same numbers on every machine and standard library.
class Rng {
 public:
  explicit Rng(uint64_t state) : state_(state) {}
  uint64_t Next() { return Mix64(state_++ * 0x9e3779b97f4a7c15ull); }
  float Uniform(float lo, float hi) {  // [lo, hi), 24 random bits
    return lo + (hi - lo) * static_cast<float>(Next() >> 40) / 16777216.f;
  }
  int64_t Below(int64_t n) {  // [0, n)
    return static_cast<int64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  float Gaussian() {  // Box-Muller
    const float u1 = Uniform(1e-7f, 1.f), u2 = Uniform(0.f, 1.f);
    return std::sqrt(-2.f * std::log(u1)) * std::cos(6.2831853f * u2);
  }

 private:
  uint64_t state_;
};

uint64_t LineSeed(uint64_t seed, Split split, int64_t index, uint64_t purpose) {
  const uint64_t s = split == Split::kTrain ? 0x7a11ull : 0x4e1dull;
  return Mix64(seed ^ Mix64(s ^ Mix64(static_cast<uint64_t>(index) ^ Mix64(purpose))));
}

// Step 1: a random length and random characters; step 2: draw again until the text falls
// in the split (about 1.1 draws for train, 10 for held-out).
std::string DrawText(uint64_t seed, Split split, int64_t index) {
  Rng rng(LineSeed(seed, split, index, /*purpose=*/1));
  const bool held_out = split == Split::kHeldOut;
  std::string text;
  do {
    text.assign(static_cast<size_t>(1 + rng.Below(kMaxTextLength)), ' ');
    for (char& c : text) c = kAlphabet[rng.Below(static_cast<int64_t>(kAlphabet.size()))];
  } while (IsHeldOutText(text) != held_out);
  return text;
}

// Glyph boxes: scale jitter, per-gap spacing, a random horizontal start and per-glyph vertical
// jitter; squeezed horizontally when the line would not fit 128 px.
std::vector<GlyphBox> Layout(size_t n, Rng& rng) {
  float glyph_w = rng.Uniform(1.6f, 2.2f) * kGlyphWidth;    // 8..11 px
  const float glyph_h = rng.Uniform(2.6f, 3.6f) * kGlyphHeight;  // 18.2..25.2 px
  std::vector<float> gaps(n, 0.f);
  for (size_t i = 1; i < n; ++i) gaps[i] = rng.Uniform(0.5f, 3.5f);
  float total = n * glyph_w;
  for (float g : gaps) total += g;
  const float room = kLineWidth - 2 * kMargin;
  if (total > room) {
    const float squeeze = room / total;
    glyph_w *= squeeze;
    for (float& g : gaps) g *= squeeze;
    total = room;
  }
  float x = kMargin + rng.Uniform(0.f, room - total);
  const float y_room = kLineHeight - 2 * kMargin - glyph_h;  // >= 4.8 px
  const float y = kMargin + rng.Uniform(1.f, y_room - 1.f);
  std::vector<GlyphBox> boxes;
  for (size_t i = 0; i < n; ++i) {
    x += gaps[i];
    const float dy = rng.Uniform(-1.f, 1.f);
    boxes.push_back({.x = x, .y = y + dy, .width = glyph_w, .height = glyph_h});
    x += glyph_w;
  }
  return boxes;
}

}  // namespace

bool IsHeldOutText(absl::string_view text) { return base::Fnv1a64(text) % kHeldOutBuckets == 0; }

TextLineGenerator::TextLineGenerator(const TextLineOptions& options) : options_(options) {}

std::string TextLineGenerator::Text(Split split, int64_t index) const {
  return DrawText(options_.seed, split, index);
}

TextLine TextLineGenerator::Line(Split split, int64_t index) const {
  TextLine line{.text = Text(split, index)};
  Rng rng(LineSeed(options_.seed, split, index, /*purpose=*/2));
  line.glyphs = Layout(line.text.size(), rng);
  const float background = rng.Uniform(0.f, 0.15f);
  const float ink = rng.Uniform(0.7f, 1.f);
  line.pixels.assign(static_cast<size_t>(kLineHeight) * kLineWidth, background);
  for (size_t i = 0; i < line.text.size(); ++i) {
    DrawGlyph(line.text[i], line.glyphs[i], ink, absl::MakeSpan(line.pixels), kLineWidth,
              kLineHeight);
  }
  if (options_.noise > 0) {
    for (float& v : line.pixels) v += options_.noise * rng.Gaussian();
  }
  for (float& v : line.pixels) v = std::clamp(v, 0.f, 1.f);
  return line;
}

}  // namespace tessera::jobs::ocr
