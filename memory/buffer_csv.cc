#include "tessera/memory/buffer_csv.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tessera/base/status_macros.h"

namespace tessera::memory {
namespace {

constexpr std::array<absl::string_view, 4> kColumns = {"id", "lower", "upper", "size"};

// `source:line: message`.
absl::Status LineError(absl::string_view source, int line_number, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", line_number, ": ", message));
}

// Splits one line into fields (RFC 4180): a field in double quotes keeps its text exactly, with
// "" read as one quote; an unquoted field loses surrounding spaces.
absl::StatusOr<std::vector<std::string>> SplitRecord(absl::string_view line,
                                                     absl::string_view source, int line_number) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      for (++i;; ++i) {
        if (i >= line.size()) {
          return LineError(source, line_number,
                           "a quoted field has no closing quote (a field cannot span lines)");
        }
        if (line[i] != '"') {
          field.push_back(line[i]);
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          break;
        }
      }
      for (++i; i < line.size() && line[i] != ','; ++i) {
        if (line[i] != ' ' && line[i] != '\t') {
          return LineError(source, line_number,
                           absl::StrCat("text after the closing quote of field ", fields.size() + 1,
                                        "; double a quote inside a quoted field (\"\")"));
        }
      }
    } else {
      const size_t comma = std::min(line.find(',', i), line.size());
      const absl::string_view text = absl::StripAsciiWhitespace(line.substr(i, comma - i));
      if (text.find('"') != absl::string_view::npos) {
        return LineError(source, line_number,
                         absl::StrCat("field ", fields.size() + 1, " '", text,
                                      "' has a quote; enclose the field in quotes and double the "
                                      "quotes inside (\"a \"\"b\"\"\")"));
      }
      field = std::string(text);
      i = comma;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) return fields;
    ++i;  // the comma
  }
}

struct Header {
  std::array<int, 4> index = {-1, -1, -1, -1};  // column of id, lower, upper, size
  size_t width = 0;
};

absl::StatusOr<Header> ParseHeader(absl::string_view line, absl::string_view source) {
  TS_ASSIGN_OR_RETURN(std::vector<std::string> names, SplitRecord(line, source, 1));
  Header header;
  header.width = names.size();
  for (size_t c = 0; c < names.size(); ++c) {
    const std::string& name = names[c];
    if (name == "offset") continue;
    auto it = std::find(kColumns.begin(), kColumns.end(), name);
    if (it == kColumns.end()) {
      return LineError(source, 1,
                       absl::StrCat("unknown column '", name,
                                    "'; the header must name id,lower,upper,size (and optionally "
                                    "offset)"));
    }
    header.index[it - kColumns.begin()] = static_cast<int>(c);
  }
  for (size_t k = 0; k < kColumns.size(); ++k) {
    if (header.index[k] < 0) {
      return LineError(source, 1,
                       absl::StrCat("the header lacks the column '", kColumns[k],
                                    "'; the first line must be a header like id,lower,upper,size"));
    }
  }
  return header;
}

struct Row {
  std::string id;
  Buffer buffer;
};

absl::StatusOr<Row> ParseRow(absl::string_view line, const Header& header,
                             absl::string_view source, int line_number) {
  TS_ASSIGN_OR_RETURN(std::vector<std::string> fields, SplitRecord(line, source, line_number));
  if (fields.size() != header.width) {
    return LineError(source, line_number,
                     absl::StrCat(fields.size(), " fields where the header has ", header.width,
                                  fields.size() > header.width
                                      ? "; quote an id that has a comma (\"a,b\")"
                                      : ""));
  }
  Row row{.id = fields[header.index[0]]};
  if (row.id.empty()) return LineError(source, line_number, "empty id; give every buffer an id");
  std::array<int64_t, 4> values{};
  for (size_t k = 1; k < kColumns.size(); ++k) {
    const std::string& text = fields[header.index[k]];
    if (!absl::SimpleAtoi(text, &values[k])) {
      return LineError(source, line_number,
                       absl::StrCat("field '", kColumns[k], "' is '", text, "', not an integer"));
    }
  }
  row.buffer = {.start = values[1], .end = values[2], .size = values[3]};
  if (absl::Status s = CheckBuffer(row.buffer); !s.ok()) {
    return LineError(source, line_number, absl::StrCat("buffer '", row.id, "': ", s.message()));
  }
  return row;
}

// Quoted when the text would not read back unchanged unquoted.
std::string CsvField(absl::string_view text) {
  const bool plain = !text.empty() && text.find_first_of(",\"") == absl::string_view::npos &&
                     absl::StripAsciiWhitespace(text) == text;
  if (plain) return std::string(text);
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

}  // namespace

absl::StatusOr<BufferTable> ParseBufferCsv(absl::string_view text, absl::string_view source) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  BufferTable table;
  absl::flat_hash_map<std::string, int> line_of_id;
  std::optional<Header> header;
  for (size_t n = 0; n < lines.size(); ++n) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[n]);
    if (line.empty()) continue;
    if (!header.has_value()) {
      TS_ASSIGN_OR_RETURN(header, ParseHeader(line, source));
      continue;
    }
    const int line_number = static_cast<int>(n) + 1;
    TS_ASSIGN_OR_RETURN(Row row, ParseRow(line, *header, source, line_number));
    auto [it, inserted] = line_of_id.emplace(row.id, line_number);
    if (!inserted) {
      return LineError(source, line_number,
                       absl::StrCat("id '", row.id, "' repeats line ", it->second,
                                    "; give every buffer its own id"));
    }
    row.buffer.id = static_cast<int64_t>(table.buffers.size());
    table.buffers.push_back(row.buffer);
    table.ids.push_back(std::move(row.id));
  }
  if (!header.has_value()) {
    return LineError(source, 1, "no header line; the first line must be id,lower,upper,size");
  }
  return table;
}

absl::StatusOr<BufferTable> ReadBufferCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read buffer list '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseBufferCsv(text.str(), path);
}

std::string FormatBufferCsv(absl::Span<const Buffer> buffers, absl::Span<const int64_t> offsets,
                            absl::Span<const std::string> ids) {
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const int64_t offset = i < offsets.size() ? offsets[i] : 0;
    const std::string id = i < ids.size() ? CsvField(ids[i]) : absl::StrCat(b.id);
    absl::StrAppend(&out, id, ",", b.start, ",", b.end, ",", b.size, ",", offset, "\n");
  }
  return out;
}

absl::Status WriteBufferCsv(const std::string& path, absl::Span<const Buffer> buffers,
                            absl::Span<const int64_t> offsets, absl::Span<const std::string> ids) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << FormatBufferCsv(buffers, offsets, ids);
  if (!out) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write buffer list '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::memory
