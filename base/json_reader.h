// Reading JSON files that people write or edit (graph files, cluster files, plan files):
// parsing with a guard against absurd nesting, then typed fields whose every error is
// "<source>: <path>: <what>", the path naming the field the way the file spells it.
//
//   TS_ASSIGN_OR_RETURN(const nlohmann::json doc,
//                       base::ParseJson(text, "model.json", {.expected = "a graph file"}));
//   const base::JsonField root(doc, "model.json");
//   TS_RETURN_IF_ERROR(root.RequireObject({"name", "nodes"}));
//   TS_ASSIGN_OR_RETURN(const base::JsonField nodes, root.Member("nodes"));
//   TS_ASSIGN_OR_RETURN(const size_t n, nodes.ArraySize());
//   const base::JsonField node = nodes.Element(3).Labeled("conv1");
//   node.Error("bad");                      // model.json: nodes[3] ("conv1"): bad
//   node.MemberOrDie("groups").IntInRange(1, 64);
//       // model.json: nodes[3] ("conv1").groups: got 0; allowed: 1 to 64
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessera::base {

// What a document should be, for the errors of ParseJson.
struct JsonFormat {
  // What the text should hold, as the errors say it: "a tessera-graph JSON object".
  absl::string_view expected;
  // Deeper bracket nesting is refused before the parser sees the text (formats nest a few
  // levels; garbage nested a million deep is not worth parsing).
  int max_nesting = 64;
};

// The document in `text`, or InvalidArgument starting with "<source>: ": for text that is
// empty (only white space), nests deeper than `format.max_nesting` (naming the byte), or is
// not JSON (naming the parser's line and column). Strings in the document are valid UTF-8.
absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text, absl::string_view source,
                                         const JsonFormat& format);

// How IntInRange reads integers: as JSON integers only ("4"; "4.0" is refused), or also as
// integral numbers with a fraction or exponent ("1.6e10", "4.0"), for hand-written figures.
enum class JsonInteger { kLiteral, kIntegralNumber };

// One value inside a parsed document, with its path for error messages. Refers to the
// document and to the source's characters: both must outlive it.
class JsonField {
 public:
  // The document's root (path ""): errors read "<source>: <what>".
  JsonField(const nlohmann::json& value, absl::string_view source, std::string path = "")
      : value_(&value), path_(std::move(path)), source_(source) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  absl::string_view source() const { return source_; }

  // InvalidArgument "<source>: <path>: <what>" ("<source>: <what>" at the root).
  absl::Status Error(absl::string_view what) const;
  // Error "expected <expected>, got <the value, shortened>".
  absl::Status TypeError(absl::string_view expected) const;

  // Errors unless this is an object whose members are all in `allowed` (the error names
  // the unknown member and lists the allowed ones).
  absl::Status RequireObject(absl::Span<const absl::string_view> allowed) const;
  // Errors unless this is an object; any members (formats that welcome extra fields).
  absl::Status RequireOpenObject() const;

  // Object members. Has is false on values that are not objects.
  bool Has(absl::string_view key) const;
  absl::StatusOr<JsonField> Member(absl::string_view key) const;  // error when missing
  JsonField MemberOrDie(absl::string_view key) const;             // after Has(key)

  // Number of elements; errors unless an array ("expected <expected>, got ...").
  absl::StatusOr<size_t> ArraySize(absl::string_view expected = "an array") const;
  JsonField Element(size_t i) const;  // after ArraySize: path "<path>[i]"
  // The same value with a label after its path: nodes[3] -> nodes[3] ("conv1").
  JsonField Labeled(absl::string_view label) const;

  // A JSON integer that fits in int64 (the error for a larger one says the limit).
  absl::StatusOr<int64_t> Int() const;
  // A JSON number, or one of the strings "inf", "-inf", "nan" (JSON has no literal for them).
  absl::StatusOr<double> Double() const;
  absl::StatusOr<bool> Bool() const;  // true or false; 0 and 1 are refused
  absl::StatusOr<std::string> String() const;
  absl::StatusOr<std::string> NonEmptyString() const;
  absl::StatusOr<std::vector<int64_t>> IntArray() const;
  absl::StatusOr<std::vector<double>> DoubleArray() const;  // elements as Double()

  // An integer in [min, max]; the error says "got <value>; allowed: <min> to <max>".
  absl::StatusOr<int64_t> IntInRange(int64_t min, int64_t max,
                                     JsonInteger form = JsonInteger::kLiteral) const;
  // A finite JSON number in [min, max] ("allowed: >= <min> and <= <max>"), or in (min, max]
  // for NumberAbove ("allowed: > <min> and <= <max>").
  absl::StatusOr<double> NumberInRange(double min, double max) const;
  absl::StatusOr<double> NumberAbove(double min, double max) const;

 private:
  absl::StatusOr<double> Number(double min, bool min_exclusive, double max) const;
  absl::Status RangeError(absl::string_view allowed) const;

  const nlohmann::json* value_;
  std::string path_;
  absl::string_view source_;
};

// A short, safe description of a value for error messages: "2", "\"abc\"",
// "an array of 3 values", "an object".
std::string DescribeJson(const nlohmann::json& value);
// `text` in double quotes, cut to a readable length (never inside a UTF-8 sequence).
std::string Quote(absl::string_view text);

}  // namespace tessera::base
