// Fitting and augmenting text-line images (line_image.h).
#include "tessera/jobs/ocr/line_image.h"

#include <algorithm>
#include <cmath>

#include "tessera/base/hash.h"

namespace tessera::jobs::ocr {
namespace {

// Bilinear sample of `src` [h, w] at (x, y) in pixel centres; outside is `outside`.
float Sample(const std::vector<float>& src, int64_t w, int64_t h, double x, double y,
             float outside) {
  const double fx = std::floor(x), fy = std::floor(y);
  const auto at = [&](int64_t xi, int64_t yi) {
    return xi < 0 || yi < 0 || xi >= w || yi >= h ? outside : src[yi * w + xi];
  };
  const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  const double ax = x - fx, ay = y - fy;
  return static_cast<float>((1 - ay) * ((1 - ax) * at(x0, y0) + ax * at(x0 + 1, y0)) +
                            ay * ((1 - ax) * at(x0, y0 + 1) + ax * at(x0 + 1, y0 + 1)));
}

// SplitMix64 draws in [0, 1).
struct Draws {
  uint64_t key;
  double Next() {
    key += 0x9e3779b97f4a7c15ull;
    return static_cast<double>(base::Mix64(key) >> 11) * 0x1.0p-53;
  }
  double Between(double lo, double hi) { return lo + (hi - lo) * Next(); }
};

// The scale FitLine draws `image` at.
double Scale(const GreyImage& image, const LineGeometry& g) {
  const double scale = static_cast<double>(g.height) / static_cast<double>(image.height);
  return image.width * scale > g.width ? static_cast<double>(g.width) / image.width : scale;
}

}  // namespace

int64_t DrawnWidth(const GreyImage& image, const LineGeometry& g) {
  return std::min<int64_t>(g.width, std::llround(image.width * Scale(image, g)));
}

int64_t LineFrames(int64_t drawn_width, const LineGeometry& g) {
  return std::min(g.width / 4, (drawn_width + 3) / 4 + 1);
}

std::vector<float> FitLine(const GreyImage& image, const LineGeometry& g) {
  std::vector<float> ink(image.pixels.size());
  for (size_t i = 0; i < ink.size(); ++i) ink[i] = 1.f - image.pixels[i] / 255.f;
  const double scale = Scale(image, g);
  const double drawn_h = image.height * scale;
  const double top = (g.height - drawn_h) / 2;
  std::vector<float> out(static_cast<size_t>(g.height * g.width), 0.f);
  const int64_t drawn_w = DrawnWidth(image, g);
  for (int64_t y = 0; y < g.height; ++y) {
    for (int64_t x = 0; x < drawn_w; ++x) {
      const double sx = (x + 0.5) / scale - 0.5, sy = (y - top + 0.5) / scale - 0.5;
      out[y * g.width + x] = Sample(ink, image.width, image.height, sx, sy, 0.f);
    }
  }
  return out;
}

void AugmentLine(std::vector<float>& pixels, const LineGeometry& g, int64_t drawn_width,
                 uint64_t key) {
  Draws d{key};
  const double angle = d.Between(-1.5, 1.5) * M_PI / 180, shear = d.Between(-0.2, 0.2);
  const bool blur = d.Next() < 1.0 / 3;
  const double noise = d.Between(0, 0.08);
  const double cx = drawn_width / 2.0, cy = g.height / 2.0, c = std::cos(angle),
               s = std::sin(angle);
  std::vector<float> out(pixels.size());
  for (int64_t y = 0; y < g.height; ++y) {
    for (int64_t x = 0; x < g.width; ++x) {  // the inverse map: rotate back, then unshear
      const double rx = c * (x - cx) + s * (y - cy), ry = -s * (x - cx) + c * (y - cy);
      out[y * g.width + x] = Sample(pixels, g.width, g.height, rx - shear * ry + cx, ry + cy, 0.f);
    }
  }
  if (blur) {  // a 3x3 box, edges clamped
    std::vector<float> b(out.size());
    for (int64_t y = 0; y < g.height; ++y) {
      for (int64_t x = 0; x < g.width; ++x) {
        float sum = 0;
        for (int64_t dy = -1; dy <= 1; ++dy) {
          for (int64_t dx = -1; dx <= 1; ++dx) {
            sum += out[std::clamp<int64_t>(y + dy, 0, g.height - 1) * g.width +
                       std::clamp<int64_t>(x + dx, 0, g.width - 1)];
          }
        }
        b[y * g.width + x] = sum / 9;
      }
    }
    out.swap(b);
  }
  for (float& p : out) p = std::clamp(static_cast<float>(p + d.Between(-noise, noise)), 0.f, 1.f);
  pixels.swap(out);
}

}  // namespace tessera::jobs::ocr
