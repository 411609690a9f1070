// A text-line image made into the ocr model's input, and the optional augmentation of it.
//
//   TS_ASSIGN_OR_RETURN(GreyImage png, ReadPng(path));                  // png_reader.h
//   std::vector<float> x = FitLine(png, {.height = 32, .width = 512});  // [32 * 512], ink 1
//   AugmentLine(x, {.height = 32, .width = 512}, /*key=*/Mix64(seed ^ row));
//
// FitLine scales the line to the model's height keeping its aspect ratio (bilinear); a line
// that would then be wider than the model is scaled to its width instead (and centred
// vertically). The rest is paper. Pixels become ink in [0, 1]: 1 - grey / 255, so paper is 0,
// as in the synthetic task's lines.
// AugmentLine draws from `key` alone (the same line and key give the same image on every
// worker): a small rotation (within 1.5 degrees) and shear (within 0.2), a box blur in one
// draw of three, and uniform noise of up to 0.08.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/jobs/ocr/png_reader.h"

namespace tessera::jobs::ocr {

struct LineGeometry {
  int64_t height = 32, width = 512;
};

std::vector<float> FitLine(const GreyImage& image, const LineGeometry& g);
void AugmentLine(std::vector<float>& pixels, const LineGeometry& g, uint64_t key);

}  // namespace tessera::jobs::ocr
