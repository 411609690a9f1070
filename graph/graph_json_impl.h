// Internal to the graph file (graph_json_*.cc): its format constants, the writing of
// doubles, and the attribute codec. Fields are read with base::JsonField
// (base/json_reader.h), which names each field's path in its errors.
//
//   const base::JsonField attrs(doc, "model.json", "nodes[3].attrs");
//   TS_ASSIGN_OR_RETURN(OpAttrs a, AttrsFromJson(OpKind::kConv, attrs));
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/base/json_reader.h"
#include "tessera/graph/op_attrs.h"
#include "tessera/graph/op_kind.h"

namespace tessera::graph::json_internal {

using Json = nlohmann::json;                 // documents being read
using OrderedJson = nlohmann::ordered_json;  // documents being written (members keep their order)

inline constexpr absl::string_view kFormatName = "tessera-graph";
inline constexpr int64_t kFormatVersion = 1;
inline constexpr size_t kMaxRank = 16;
// A graph file nests 4 deep; anything far deeper is garbage, rejected before parsing.
inline constexpr base::JsonFormat kJsonFormat = {.expected = "a tessera-graph JSON object",
                                                 .max_nesting = 64};

// Doubles: finite values as JSON numbers (shortest text that reads back to the
// same bits); infinities and NaN as the strings "inf", "-inf", "nan" (what
// base::JsonField::Double reads).
OrderedJson DoubleToJson(double value);

// The "attrs" object of a node, one member per field of the attributes' struct.
OrderedJson AttrsToJson(const OpAttrs& attrs);
// Reads the attributes of an op of `kind` from its "attrs" object; missing
// members keep their defaults, unknown members are errors.
absl::StatusOr<OpAttrs> AttrsFromJson(OpKind kind, const base::JsonField& attrs);

}  // namespace tessera::graph::json_internal
