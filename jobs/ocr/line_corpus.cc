// OCR corpora on disk and their character sets (line_corpus.h).
#include "tessera/jobs/ocr/line_corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/utf8.h"

namespace tessera::jobs::ocr {
namespace {

constexpr int64_t kMaxCharsetBytes = 1 << 20;

absl::Status LineError(const std::string& file, int64_t line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", what));
}

}  // namespace

absl::StatusOr<LineCorpus> LineCorpus::Open(const std::string& tsv) {
  std::ifstream in(tsv, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read OCR lines '", tsv, "'"));
  LineCorpus c;
  c.name_ = tsv;
  const std::filesystem::path folder = std::filesystem::path(tsv).parent_path();
  std::string raw;
  for (int64_t number = 1; std::getline(in, raw); ++number) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.empty()) continue;
    const size_t tab = raw.find('\t');
    if (tab == std::string::npos || raw.find('\t', tab + 1) != std::string::npos) {
      return LineError(tsv, number, absl::StrCat("want one tab between image and text, found ",
                                                 tab == std::string::npos ? "none" : "more"));
    }
    if (tab == 0) return LineError(tsv, number, "empty image path");
    if (tab + 1 == raw.size()) return LineError(tsv, number, "empty text");
    if (!DecodeUtf8(raw).has_value()) return LineError(tsv, number, "the text is not UTF-8");
    c.examples_.push_back({.image = (folder / raw.substr(0, tab)).string(),
                           .name = raw.substr(0, tab), .text = raw.substr(tab + 1),
                           .line = number});
  }
  if (c.examples_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("OCR lines '", tsv, "' hold no line"));
  }
  return c;
}

LineCorpus LineCorpus::Subset(const std::vector<int64_t>& indices, const std::string& name) const {
  LineCorpus c;
  c.name_ = name;
  for (int64_t i : indices) c.examples_.push_back(examples_[i]);
  return c;
}

absl::StatusOr<Charset> Charset::FromTexts(const LineCorpus& corpus) {
  std::set<char32_t> all;
  for (int64_t i = 0; i < corpus.size(); ++i) {
    const std::u32string cps = *DecodeUtf8(corpus.at(i).text);  // checked by Open
    all.insert(cps.begin(), cps.end());
  }
  Charset c;
  c.chars_.assign(all.begin(), all.end());
  return c;
}

absl::StatusOr<Charset> Charset::FromFile(const std::string& path) {
  TS_ASSIGN_OR_RETURN(const std::string text,
                      base::ReadFileText(path, "character set", kMaxCharsetBytes));
  const std::optional<std::u32string> cps = DecodeUtf8(text);
  if (!cps.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("character set '", path, "' is not UTF-8"));
  }
  std::set<char32_t> all(cps->begin(), cps->end());
  all.erase(U'\n');
  all.erase(U'\r');
  if (all.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("character set '", path, "' is empty"));
  }
  Charset c;
  c.chars_.assign(all.begin(), all.end());
  return c;
}

absl::StatusOr<std::vector<int64_t>> Charset::Labels(const std::string& text,
                                                     const std::string& where) const {
  const std::optional<std::u32string> cps = DecodeUtf8(text);
  if (!cps.has_value()) return absl::InvalidArgumentError(absl::StrCat(where, ": not UTF-8"));
  std::vector<int64_t> labels;
  for (char32_t c : *cps) {
    const auto it = std::lower_bound(chars_.begin(), chars_.end(), c);
    if (it == chars_.end() || *it != c) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the character '", EncodeUtf8(std::u32string(1, c)), "' (U+",
          absl::Hex(static_cast<uint32_t>(c), absl::kZeroPad4),
          ") is not in the character set; add it to --charset or drop the line"));
    }
    labels.push_back(1 + (it - chars_.begin()));
  }
  return labels;
}

std::string Charset::Text(const std::vector<int64_t>& labels) const {
  std::u32string out;
  for (int64_t l : labels) {
    if (l >= 1 && l <= size()) out.push_back(chars_[l - 1]);
  }
  return EncodeUtf8(out);
}

std::string Charset::Describe() const { return EncodeUtf8(chars_); }

}  // namespace tessera::jobs::ocr
