#include "tessera/memory/buffer_csv.h"

#include <algorithm>
#include <array>
#include <optional>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tessera/base/status_macros.h"

namespace tessera::memory {
namespace {

constexpr std::array<absl::string_view, 4> kColumns = {"id", "lower", "upper", "size"};

struct Header {
  std::array<int, 4> index = {-1, -1, -1, -1};  // column of id, lower, upper, size
  size_t width = 0;
};

absl::StatusOr<Header> ParseHeader(absl::string_view line, absl::string_view source) {
  Header header;
  std::vector<absl::string_view> names = absl::StrSplit(line, ',');
  header.width = names.size();
  for (size_t c = 0; c < names.size(); ++c) {
    const absl::string_view name = absl::StripAsciiWhitespace(names[c]);
    if (name == "offset") continue;
    auto it = std::find(kColumns.begin(), kColumns.end(), name);
    if (it == kColumns.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":1: unknown column '", name,
                       "'; the header must name id,lower,upper,size (and optionally offset)"));
    }
    header.index[it - kColumns.begin()] = static_cast<int>(c);
  }
  for (size_t k = 0; k < kColumns.size(); ++k) {
    if (header.index[k] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ":1: the header lacks the column '", kColumns[k],
          "'; the first line must be a header like id,lower,upper,size"));
    }
  }
  return header;
}

absl::StatusOr<Buffer> ParseRow(absl::string_view line, const Header& header,
                                absl::string_view source, int line_number) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
  if (fields.size() != header.width) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", line_number, ": ", fields.size(),
                                                   " fields where the header has ",
                                                   header.width));
  }
  std::array<int64_t, 4> values{};
  for (size_t k = 0; k < kColumns.size(); ++k) {
    const absl::string_view text = absl::StripAsciiWhitespace(fields[header.index[k]]);
    if (!absl::SimpleAtoi(text, &values[k])) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line_number, ": field '",
                                                     kColumns[k], "' is '", text,
                                                     "', not an integer"));
    }
  }
  return Buffer{.id = values[0], .start = values[1], .end = values[2], .size = values[3]};
}

}  // namespace

absl::StatusOr<std::vector<Buffer>> ParseBufferCsv(absl::string_view text,
                                                   absl::string_view source) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  std::vector<Buffer> buffers;
  std::optional<Header> header;
  for (size_t n = 0; n < lines.size(); ++n) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[n]);
    if (line.empty()) continue;
    if (!header.has_value()) {
      TS_ASSIGN_OR_RETURN(header, ParseHeader(line, source));
      continue;
    }
    TS_ASSIGN_OR_RETURN(Buffer buffer, ParseRow(line, *header, source, static_cast<int>(n) + 1));
    buffers.push_back(buffer);
  }
  if (!header.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ":1: no header line; the first line must be id,lower,upper,size"));
  }
  return buffers;
}

absl::StatusOr<std::vector<Buffer>> ReadBufferCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read buffer list '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseBufferCsv(text.str(), path);
}

std::string FormatBufferCsv(absl::Span<const Buffer> buffers, absl::Span<const int64_t> offsets) {
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const int64_t offset = i < offsets.size() ? offsets[i] : 0;
    absl::StrAppend(&out, b.id, ",", b.start, ",", b.end, ",", b.size, ",", offset, "\n");
  }
  return out;
}

absl::Status WriteBufferCsv(const std::string& path, absl::Span<const Buffer> buffers,
                            absl::Span<const int64_t> offsets) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << FormatBufferCsv(buffers, offsets);
  if (!out) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write buffer list '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::memory
