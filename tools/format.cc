#include "tessera/tools/format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessera::tools {
namespace {

std::string Scaled(double value, const char* const* units, int count, double step) {
  int unit = 0;
  double v = std::fabs(value);
  while (v >= step && unit + 1 < count) {
    v /= step;
    ++unit;
  }
  if (value < 0) v = -v;
  if (unit == 0) return absl::StrFormat("%.0f%s", v, units[0]);
  return absl::StrFormat(v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v, units[unit]);
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

TextTable::TextTable(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  align_.resize(header_.size(), Align::kLeft);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::AddSeparator() { rows_.emplace_back(); }

std::string TextTable::Render() const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  const auto render_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      absl::StrAppend(&line, align_[c] == Align::kRight ? pad + row[c] : row[c] + pad,
                      c + 1 < row.size() ? "  " : "");
    }
    line.erase(line.find_last_not_of(' ') + 1);
    return line + "\n";
  };
  std::string out = render_row(header_);
  const std::string rule(total > 2 ? total - 2 : 0, '-');
  absl::StrAppend(&out, rule, "\n");
  for (const auto& row : rows_) {
    absl::StrAppend(&out, row.empty() ? rule + "\n" : render_row(row));
  }
  return out;
}

std::string Elide(const std::string& text, size_t width) {
  if (text.size() <= width || width < 5) return text;
  const size_t keep = width - 3;
  const size_t head = keep / 2;
  return absl::StrCat(text.substr(0, head), "...", text.substr(text.size() - (keep - head)));
}

}  // namespace tessera::tools
