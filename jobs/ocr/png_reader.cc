// PNG to 8-bit grey with libpng's simplified API (png_reader.h).
#include "tessera/jobs/ocr/png_reader.h"

#include <png.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace tessera::jobs::ocr {

namespace {

// Reads `path` to its decoded pixels when `pixels`, else its header alone.
absl::StatusOr<GreyImage> Read(const std::string& path, bool pixels) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  const auto fail = [&](const std::string& what) {
    const std::string message = image.message[0] != '\0' ? image.message : what;
    png_image_free(&image);
    return absl::InvalidArgumentError(
        absl::StrCat("image '", path, "': ", message, " (want a readable PNG file)"));
  };
  // One open of the file: its signature checked, then libpng reads on from the start.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (f == nullptr) return fail(std::strerror(errno));
  unsigned char signature[8] = {};
  const bool png = std::fread(signature, 1, 8, f.get()) == 8 && png_sig_cmp(signature, 0, 8) == 0;
  if (!png) return fail("not a PNG file");
  std::rewind(f.get());
  if (png_image_begin_read_from_stdio(&image, f.get()) == 0) return fail("unreadable header");
  if (static_cast<int64_t>(image.width) * image.height > (int64_t{1} << 26) || image.width == 0 ||
      image.height == 0) {
    return fail(absl::StrCat(image.width, " x ", image.height, " pixels is out of range"));
  }
  GreyImage out{.width = image.width, .height = image.height};
  if (!pixels) {
    png_image_free(&image);
    return out;
  }
  image.format = PNG_FORMAT_GRAY;  // alpha composited over the background below
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  png_color white{255, 255, 255};
  if (png_image_finish_read(&image, &white, out.pixels.data(), 0, nullptr) == 0) {
    return fail("corrupt or truncated data");
  }
  png_image_free(&image);
  return out;
}

}  // namespace

absl::StatusOr<GreyImage> ReadPng(const std::string& path) { return Read(path, true); }
absl::StatusOr<GreyImage> ReadPngSize(const std::string& path) { return Read(path, false); }

}  // namespace tessera::jobs::ocr
