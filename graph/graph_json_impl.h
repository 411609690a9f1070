// Internal to the graph file (graph_json_*.cc): reading fields with their
// paths for error messages, and the attribute codec.
//
//   Field root(doc, "", "model.json");
//   TS_ASSIGN_OR_RETURN(Field nodes, root.Member("nodes"));
//   nodes.Element(3).Labeled("conv1").Error("bad");   // model.json: nodes[3] ("conv1"): bad
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/graph/op_attrs.h"
#include "tessera/graph/op_kind.h"

namespace tessera::graph::json_internal {

using Json = nlohmann::json;                 // documents being read
using OrderedJson = nlohmann::ordered_json;  // documents being written (members keep their order)

inline constexpr absl::string_view kFormatName = "tessera-graph";
inline constexpr int64_t kFormatVersion = 1;
inline constexpr size_t kMaxRank = 16;
// A graph file nests 4 deep; anything far deeper is garbage, rejected before parsing.
inline constexpr int kMaxNesting = 64;

// One value inside a document being read, with its path for error messages.
class Field {
 public:
  Field(const Json& value, std::string path, absl::string_view source)
      : value_(&value), path_(std::move(path)), source_(source) {}

  const Json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  absl::string_view source() const { return source_; }

  // InvalidArgument "<source>: <path>: <what>".
  absl::Status Error(absl::string_view what) const;
  // "... expected <expected>, got <the value, shortened>".
  absl::Status TypeError(absl::string_view expected) const;

  // Errors unless this is an object whose members are all in `allowed`.
  absl::Status RequireObject(absl::Span<const absl::string_view> allowed) const;
  // Object members (call on objects only).
  bool Has(absl::string_view key) const;
  absl::StatusOr<Field> Member(absl::string_view key) const;  // error when missing
  Field MemberOrDie(absl::string_view key) const;             // after Has(key)

  // Number of elements; errors unless an array ("expected <expected>").
  absl::StatusOr<size_t> ArraySize(absl::string_view expected = "an array") const;
  Field Element(size_t i) const;  // after ArraySize
  // The same value with a label after its path: nodes[3] -> nodes[3] ("conv1").
  Field Labeled(absl::string_view label) const;

  absl::StatusOr<int64_t> Int() const;
  absl::StatusOr<double> Double() const;  // a number, or "inf", "-inf", "nan"
  absl::StatusOr<bool> Bool() const;
  absl::StatusOr<std::string> String() const;
  absl::StatusOr<std::vector<int64_t>> IntArray() const;
  absl::StatusOr<std::vector<double>> DoubleArray() const;

 private:
  const Json* value_;
  std::string path_;
  absl::string_view source_;
};

// A short, safe description of a value for error messages: "2", "\"abc\"",
// "an array of 3 values", "an object".
std::string Describe(const Json& value);
// `text` quoted and cut to a readable length.
std::string Quote(absl::string_view text);

// Doubles: finite values as JSON numbers (shortest text that reads back to the
// same bits); infinities and NaN as the strings "inf", "-inf", "nan".
OrderedJson DoubleToJson(double value);

// The "attrs" object of a node, one member per field of the attributes' struct.
OrderedJson AttrsToJson(const OpAttrs& attrs);
// Reads the attributes of an op of `kind` from its "attrs" object; missing
// members keep their defaults, unknown members are errors.
absl::StatusOr<OpAttrs> AttrsFromJson(OpKind kind, const Field& attrs);

}  // namespace tessera::graph::json_internal
