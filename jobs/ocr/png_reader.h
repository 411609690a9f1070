// Reading text-line images: PNG files of any colour type and bit depth (grey, grey+alpha, RGB,
// RGBA, palette; 1 to 16 bits) as 8-bit grey, with libpng.
//
//   TS_ASSIGN_OR_RETURN(GreyImage im, ReadPng("lines/000001.png"));
//   im.width; im.height; im.pixels[y * im.width + x];   // 0 black .. 255 white
//   TS_ASSIGN_OR_RETURN(GreyImage size, ReadPngSize("lines/000001.png"));  // no pixels
//
// Colour is turned to grey with libpng's default weights (ITU-R BT.709); alpha is composited
// over white. Errors are InvalidArgument naming the file: missing, not a PNG, truncated or
// corrupt data, or larger than 2^26 pixels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::jobs::ocr {

struct GreyImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> pixels;  // row-major
};

absl::StatusOr<GreyImage> ReadPng(const std::string& path);
// The width and height from the file's header alone (pixels left empty), with ReadPng's errors
// for a file that is missing, not a PNG or of a size out of range.
absl::StatusOr<GreyImage> ReadPngSize(const std::string& path);

}  // namespace tessera::jobs::ocr
