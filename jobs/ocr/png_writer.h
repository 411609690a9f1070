// Grey-level PNG files without a compression library: 8-bit greyscale, no interlace, every
// row with filter 0, the zlib stream made of stored (uncompressed) deflate blocks with its
// Adler-32, every chunk with its CRC-32. A 128x32 line is about 4.2 KB.
//
//   std::vector<float> image = ...;                           // [32, 128] in [0, 1]
//   TS_RETURN_IF_ERROR(WriteGrayPng("line.png", image, 128, 32));
//   std::string bytes = EncodeGrayPng(pixels_u8, 128, 32);   // the file's bytes
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessera::jobs::ocr {

// CRC-32 (ISO 3309, as PNG chunks use) and Adler-32 (as zlib streams end with).
uint32_t Crc32(absl::string_view bytes, uint32_t crc = 0);
uint32_t Adler32(absl::string_view bytes);

// The PNG file of a width x height 8-bit grey image (row-major, 0 black). Requires
// pixels.size() == width * height, width and height >= 1 (internal invariant).
std::string EncodeGrayPng(absl::Span<const uint8_t> pixels, int width, int height);

// Writes `pixels` (row-major floats, clamped to [0, 1], 1 white) as a PNG at `path`.
// InvalidArgument naming the path when the size is not width * height or a side is < 1;
// the I/O error naming the path when the file cannot be written.
absl::Status WriteGrayPng(const std::string& path, absl::Span<const float> pixels, int width,
                          int height);

}  // namespace tessera::jobs::ocr
