// The PNG writer, read back: signature, IHDR, every chunk's CRC, the stored deflate blocks,
// the Adler-32 and the pixels; and, where python3 is present, zlib's own decompression.
#include "tessera/jobs/ocr/png_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tessera::jobs::ocr {
namespace {

uint32_t GetU32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

uint32_t BitwiseCrc32(const std::string& s) {  // the definition, without a table
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

struct Chunk {
  std::string type, data;
};

std::vector<Chunk> ReadChunks(const std::string& png) {
  std::vector<Chunk> chunks;
  size_t at = 8;
  while (at + 12 <= png.size()) {
    const uint32_t len = GetU32(png, at);
    Chunk c{png.substr(at + 4, 4), png.substr(at + 8, len)};
    EXPECT_EQ(GetU32(png, at + 8 + len), BitwiseCrc32(c.type + c.data)) << c.type;
    chunks.push_back(c);
    at += 12 + len;
  }
  EXPECT_EQ(at, png.size());
  return chunks;
}

// Inflates a zlib stream of stored blocks only.
std::string InflateStored(const std::string& z) {
  EXPECT_EQ((static_cast<unsigned char>(z[0]) * 256 + static_cast<unsigned char>(z[1])) % 31, 0);
  std::string raw;
  size_t at = 2;
  bool last = false;
  while (!last) {
    last = z[at] & 1;
    EXPECT_EQ((z[at] >> 1) & 3, 0);  // BTYPE stored
    const unsigned len = static_cast<unsigned char>(z[at + 1]) |
                         static_cast<unsigned char>(z[at + 2]) << 8;
    const unsigned nlen = static_cast<unsigned char>(z[at + 3]) |
                          static_cast<unsigned char>(z[at + 4]) << 8;
    EXPECT_EQ(len ^ 0xffffu, nlen);
    raw += z.substr(at + 5, len);
    at += 5 + len;
  }
  EXPECT_EQ(at + 4, z.size());
  EXPECT_EQ(GetU32(z, at), Adler32(raw));
  return raw;
}

TEST(OcrPngTest, ChecksumsMatchPublishedValues) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32("IEND"), 0xAE426082u);  // every PNG's last 4 bytes
  EXPECT_EQ(Adler32("Wikipedia"), 0x11E60398u);
  EXPECT_EQ(Adler32(""), 1u);
}

TEST(OcrPngTest, EncodedImageReadsBack) {
  const int w = 300, h = 250;  // 75,250 raw bytes: two stored blocks
  std::vector<uint8_t> pixels(w * h);
  for (int i = 0; i < w * h; ++i) pixels[i] = static_cast<uint8_t>((i * 7 + i / w) & 0xff);
  const std::string png = EncodeGrayPng(pixels, w, h);
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n"));
  const std::vector<Chunk> chunks = ReadChunks(png);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].type, "IHDR");
  ASSERT_EQ(chunks[0].data.size(), 13u);
  EXPECT_EQ(GetU32(chunks[0].data, 0), static_cast<uint32_t>(w));
  EXPECT_EQ(GetU32(chunks[0].data, 4), static_cast<uint32_t>(h));
  EXPECT_EQ(chunks[0].data.substr(8), std::string("\x08\x00\x00\x00\x00", 5));
  EXPECT_EQ(chunks[1].type, "IDAT");
  EXPECT_EQ(chunks[2].type, "IEND");
  EXPECT_TRUE(chunks[2].data.empty());
  const std::string raw = InflateStored(chunks[1].data);
  ASSERT_EQ(raw.size(), static_cast<size_t>((w + 1) * h));
  for (int y = 0; y < h; ++y) {
    ASSERT_EQ(raw[y * (w + 1)], '\0') << "row " << y << " filter";
    for (int x = 0; x < w; ++x) {
      ASSERT_EQ(static_cast<uint8_t>(raw[y * (w + 1) + 1 + x]), pixels[y * w + x]);
    }
  }
}

TEST(OcrPngTest, WritesFloatsAsGreyLevelsAndZlibAgrees) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "tessera_ocr_png_test.png").string();
  const std::vector<float> image = {0.f, 0.5f, 1.f, -3.f, 2.f, 0.25f};  // 3x2, clamped
  ASSERT_TRUE(WriteGrayPng(path, image, 3, 2).ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::vector<Chunk> chunks = ReadChunks(bytes.str());
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(InflateStored(chunks[1].data),
            std::string("\x00\x00\x80\xff\x00\x00\xff\x40", 8));
  // An independent decoder: Python's zlib inflates the IDAT and checks the Adler-32.
  if (std::system("python3 -c 'import zlib' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 with zlib is not available";
  }
  const std::string script = absl::StrCat(
      "python3 -c \"import zlib,struct,sys; d=open('", path, "','rb').read(); ",
      "n=struct.unpack('>I',d[33:37])[0]; raw=zlib.decompress(d[41:41+n]); ",
      "sys.exit(0 if raw==bytes([0,0,128,255,0,0,255,64]) else 1)\"");
  EXPECT_EQ(std::system(script.c_str()), 0) << script;
  std::filesystem::remove(path);
}

TEST(OcrPngTest, BadSizesAndUnwritablePathsAreErrors) {
  const std::vector<float> image(5, 0.f);
  absl::Status s = WriteGrayPng("/tmp/x.png", image, 3, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "/tmp/x.png")) << s;
  absl::Status u = WriteGrayPng("/nonexistent-dir/line.png", std::vector<float>(6), 3, 2);
  EXPECT_FALSE(u.ok());
  EXPECT_TRUE(absl::StrContains(u.message(), "/nonexistent-dir/line.png")) << u;
}

}  // namespace
}  // namespace tessera::jobs::ocr
