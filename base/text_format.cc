#include "tessera/base/text_format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace tessera::base {
namespace {

// Three significant digits: "1.42", "14.2", "142".
std::string ThreeDigits(double v, absl::string_view unit) {
  const int decimals = std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2;
  return absl::StrFormat("%.*f%s", decimals, v, unit);
}

std::string Scaled(double value, const char* const* units, int count, double step) {
  int unit = 0;
  double v = std::fabs(value);
  while (v >= step && unit + 1 < count) {
    v /= step;
    ++unit;
  }
  if (value < 0) v = -v;
  if (unit == 0) return absl::StrFormat("%.0f%s", v, units[0]);
  return ThreeDigits(v, units[unit]);
}

}  // namespace

std::string HumanCount(double value) {
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P"};
  return Scaled(value, kUnits, 6, 1000.0);
}

std::string HumanFlops(double flops) {
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  return Scaled(flops, kUnits, 7, 1000.0);
}

std::string HumanBytes(double bytes) {
  static const char* const kUnits[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
  return Scaled(bytes, kUnits, 6, 1024.0);
}

std::string HumanBytesExact(int64_t bytes) {
  static const char* const kUnits[] = {" KiB", " MiB", " GiB", " TiB", " PiB", " EiB"};
  const uint64_t magnitude =
      bytes < 0 ? uint64_t{0} - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  if (magnitude < 1024) return absl::StrCat(bytes, magnitude == 1 ? " byte" : " bytes");
  int unit = 0;
  while (unit + 1 < 6 && magnitude >> (10 * (unit + 2)) > 0) ++unit;
  const int shift = 10 * (unit + 1);
  if (magnitude % (uint64_t{1} << shift) == 0) {
    const uint64_t count = magnitude >> shift;
    return absl::StrCat(bytes < 0 ? "-" : "", count, kUnits[unit]);
  }
  return absl::StrCat(HumanBytes(static_cast<double>(bytes)), " (", bytes, " bytes)");
}

std::string HumanSeconds(double s) {
  if (s == 0) return "0 s";
  const double a = std::fabs(s);
  if (a < 1e-6) return ThreeDigits(s * 1e9, " ns");
  if (a < 1e-3) return ThreeDigits(s * 1e6, " us");
  if (a < 1) return ThreeDigits(s * 1e3, " ms");
  if (a < 60) return ThreeDigits(s, " s");
  if (a < 3600) return ThreeDigits(s / 60, " min");
  return ThreeDigits(s / 3600, " h");
}

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  static constexpr std::pair<absl::string_view, double> kUnits[] = {
      {"", 1},           {"b", 1},          {"kib", 0x1p10}, {"mib", 0x1p20}, {"gib", 0x1p30},
      {"tib", 0x1p40},   {"kb", 1e3},       {"mb", 1e6},     {"gb", 1e9},     {"tb", 1e12}};
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  size_t digits = 0;
  while (digits < trimmed.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(trimmed[digits])) ||
          trimmed[digits] == '.')) {
    ++digits;
  }
  const std::string unit =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(trimmed.substr(digits)));
  double number = 0;
  const bool numeric = digits > 0 && absl::SimpleAtod(trimmed.substr(0, digits), &number);
  for (const auto& [name, scale] : kUnits) {
    if (!numeric || unit != name) continue;
    const double bytes = std::round(number * scale);
    if (bytes > 0x1p62) break;
    return static_cast<int64_t>(bytes);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", text, "' is not a size in bytes: write a number with a unit, B, KiB, MiB, GiB, TiB ",
      "(powers of 1024) or kB, MB, GB, TB (powers of 1000), e.g. 4MiB, at most 2^62 bytes"));
}

std::string WithThousands(int64_t value) {
  // The magnitude as unsigned, so that INT64_MIN has one too.
  const uint64_t magnitude = value < 0 ? uint64_t{0} - static_cast<uint64_t>(value)
                                       : static_cast<uint64_t>(value);
  const std::string digits = absl::StrCat(magnitude);
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string WrapText(absl::string_view text, size_t width, size_t indent) {
  std::string out;
  size_t column = indent;
  bool line_empty = true;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(' ', start), text.size());
    const absl::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!line_empty && column + 1 + word.size() > width) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      column = indent;
      line_empty = true;
    }
    if (!line_empty) out += ' ';
    out.append(word.data(), word.size());
    column += word.size() + (line_empty ? 0 : 1);
    line_empty = false;
  }
  return out;
}

std::string Elide(const std::string& text, size_t width) {
  if (text.size() <= width || width < 5) return text;
  const size_t keep = width - 3;
  const size_t head = keep / 2;
  return absl::StrCat(text.substr(0, head), "...", text.substr(text.size() - (keep - head)));
}

std::string RenderTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  const auto render_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      const std::string pad(width[c] - cell.size(), ' ');
      const bool r = c < right.size() && right[c];
      absl::StrAppend(&line, r ? pad + cell : cell + pad, c + 1 < width.size() ? "  " : "");
    }
    line.erase(line.find_last_not_of(' ') + 1);
    return line + "\n";
  };
  const std::string rule(total > 2 ? total - 2 : 0, '-');
  std::string out = render_row(header) + rule + "\n";
  for (const auto& row : rows) absl::StrAppend(&out, row.empty() ? rule + "\n" : render_row(row));
  return out;
}

}  // namespace tessera::base
