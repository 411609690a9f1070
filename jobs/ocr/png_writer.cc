#include "tessera/jobs/ocr/png_writer.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"

namespace tessera::jobs::ocr {
namespace {

constexpr size_t kMaxStored = 65535;  // bytes in one stored deflate block

std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}

void PutU32(std::string& out, uint32_t v) {  // big-endian, as PNG stores integers
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

// length, type, data, CRC-32 of type + data.
void PutChunk(std::string& out, absl::string_view type, absl::string_view data) {
  PutU32(out, static_cast<uint32_t>(data.size()));
  const std::string body = absl::StrCat(type, data);
  out += body;
  PutU32(out, Crc32(body));
}

// A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951, BTYPE 00).
std::string ZlibStored(absl::string_view raw) {
  std::string z = {'\x78', '\x01'};  // deflate, 32K window; header check: 0x7801 % 31 == 0
  size_t pos = 0;
  do {
    const size_t n = std::min(kMaxStored, raw.size() - pos);
    const bool last = pos + n == raw.size();
    z.push_back(last ? '\x01' : '\x00');  // BFINAL, BTYPE 00, padded to the byte
    z.push_back(static_cast<char>(n & 0xff));  // LEN, then NLEN = ~LEN, little-endian
    z.push_back(static_cast<char>(n >> 8));
    z.push_back(static_cast<char>(~n & 0xff));
    z.push_back(static_cast<char>((~n >> 8) & 0xff));
    z.append(raw.data() + pos, n);
    pos += n;
  } while (pos < raw.size());
  PutU32(z, Adler32(raw));
  return z;
}

}  // namespace

uint32_t Crc32(absl::string_view bytes, uint32_t crc) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  crc = ~crc;
  for (unsigned char b : bytes) crc = kTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t Adler32(absl::string_view bytes) {
  uint32_t a = 1, b = 0;
  for (unsigned char c : bytes) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string EncodeGrayPng(absl::Span<const uint8_t> pixels, int width, int height) {
  TS_CHECK(width >= 1 && height >= 1 &&
           pixels.size() == static_cast<size_t>(width) * static_cast<size_t>(height))
      << width << "x" << height << " with " << pixels.size() << " pixels";
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  PutU32(ihdr, static_cast<uint32_t>(width));
  PutU32(ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // depth 8, grey, deflate, filter 0, no interlace
  PutChunk(png, "IHDR", ihdr);
  std::string raw;
  raw.reserve(static_cast<size_t>(height) * (width + 1));
  for (int y = 0; y < height; ++y) {
    raw.push_back('\0');  // filter type 0 (none)
    raw.append(reinterpret_cast<const char*>(pixels.data()) + static_cast<size_t>(y) * width,
               width);
  }
  PutChunk(png, "IDAT", ZlibStored(raw));
  PutChunk(png, "IEND", "");
  return png;
}

absl::Status WriteGrayPng(const std::string& path, absl::Span<const float> pixels, int width,
                          int height) {
  if (width < 1 || height < 1 ||
      pixels.size() != static_cast<size_t>(width) * static_cast<size_t>(height)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PNG '", path, "': ", pixels.size(), " pixels for a ", width, "x", height,
        " image; pass width * height values, width and height >= 1"));
  }
  std::vector<uint8_t> bytes(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) {
    const float v = std::isnan(pixels[i]) ? 0.f : std::clamp(pixels[i], 0.f, 1.f);
    bytes[i] = static_cast<uint8_t>(std::lround(v * 255.f));
  }
  const std::string png = EncodeGrayPng(bytes, width, height);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(png.data(), static_cast<std::streamsize>(png.size()));
  if (!out) {
    return absl::UnavailableError(absl::StrCat("PNG '", path, "': cannot write the file (",
                                               std::strerror(errno),
                                               "); check the folder exists and is writable"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::jobs::ocr
