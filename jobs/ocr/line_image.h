// A text-line image made into the ocr model's input, and the optional augmentation of it.
//
//   TS_ASSIGN_OR_RETURN(GreyImage png, ReadPng(path));                  // png_reader.h
//   std::vector<float> x = FitLine(png, {.height = 32, .width = 512});  // [32 * 512], ink 1
//   int64_t w = DrawnWidth(png, {.height = 32, .width = 512});        // the line's pixels
//   AugmentLine(x, {.height = 32, .width = 512}, w, /*key=*/Mix64(seed ^ row));
//   int64_t frames = LineFrames(w, {.height = 32, .width = 512});     // its CTC frames
//
// FitLine scales the line to the model's height keeping its aspect ratio (bilinear); a line
// that would then be wider than the model is scaled to its width instead (and centred
// vertically). It is drawn from the left, DrawnWidth pixels wide; the rest is paper. Pixels
// become ink in [0, 1]: 1 - grey / 255, so paper is 0, as in the synthetic task's lines.
// AugmentLine draws from `key` alone (the same line and key give the same image on every
// worker): a small rotation (within 1.5 degrees, about the drawn line's middle) and shear
// (within 0.2), a box blur in one draw of three, and uniform noise of up to 0.08.
// LineFrames: the CTC frames (4 pixels each) that hold a line drawn `drawn_width` wide, one
// more for what the augmentation moves right, at most the model's width / 4.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/jobs/ocr/png_reader.h"

namespace tessera::jobs::ocr {

struct LineGeometry {
  int64_t height = 32, width = 512;
};

std::vector<float> FitLine(const GreyImage& image, const LineGeometry& g);
// `image` needs only its width and height (ReadPngSize).
int64_t DrawnWidth(const GreyImage& image, const LineGeometry& g);
int64_t LineFrames(int64_t drawn_width, const LineGeometry& g);
void AugmentLine(std::vector<float>& pixels, const LineGeometry& g, int64_t drawn_width,
                 uint64_t key);

}  // namespace tessera::jobs::ocr
