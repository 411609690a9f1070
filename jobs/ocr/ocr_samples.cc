#include "tessera/jobs/ocr/ocr_samples.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/ocr/png_writer.h"

namespace tessera::jobs::ocr {

absl::Status WriteDecodedSamples(const std::string& dir, absl::Span<const TextLine> lines,
                                 absl::Span<const std::string> decoded) {
  if (lines.size() != decoded.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR samples for '", dir, "': ", lines.size(), " lines but ", decoded.size(),
        " decoded texts; pass one decoded text per line"));
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("OCR samples: cannot create the folder '", dir,
                                               "' (", error.message(), ")"));
  }
  std::string index = "file\treference\tdecoded\tresult\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string file = absl::StrFormat("sample_%02d.png", i);
    TS_RETURN_IF_ERROR(WriteGrayPng((std::filesystem::path(dir) / file).string(),
                                    lines[i].pixels, kLineWidth, kLineHeight));
    absl::StrAppend(&index, file, "\t", lines[i].text, "\t", decoded[i], "\t",
                    lines[i].text == decoded[i] ? "ok" : "wrong", "\n");
  }
  const std::string path = (std::filesystem::path(dir) / "samples.tsv").string();
  std::ofstream out(path, std::ios::trunc);
  out << index;
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("OCR samples: cannot write '", path, "'; check the folder is writable"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::jobs::ocr
