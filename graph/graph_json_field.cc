// Reading typed fields of a graph file, with the field's path in every error.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/graph_json_impl.h"

namespace tessera::graph::json_internal {
namespace {

constexpr size_t kMaxQuoted = 64;

// Dumps a scalar; never throws (invalid UTF-8 is replaced).
std::string DumpScalar(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string Quote(absl::string_view text) {
  if (text.size() <= kMaxQuoted) return absl::StrCat("\"", text, "\"");
  size_t cut = kMaxQuoted;
  // Do not cut a UTF-8 sequence in half: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat("\"", text.substr(0, cut), "...\"");
}

std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::array:
      return value.empty() ? "an empty array"
                           : absl::StrCat("an array of ", value.size(), " values");
    case Json::value_t::object:
      return value.empty() ? "an empty object" : "an object";
    case Json::value_t::string:
      return Quote(value.get_ref<const std::string&>());
    case Json::value_t::discarded:
      return "nothing";
    default:
      return DumpScalar(value);  // null, booleans and numbers are short
  }
}

OrderedJson DoubleToJson(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

absl::Status Field::Error(absl::string_view what) const {
  if (path_.empty()) return absl::InvalidArgumentError(absl::StrCat(source_, ": ", what));
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", path_, ": ", what));
}

absl::Status Field::TypeError(absl::string_view expected) const {
  return Error(absl::StrCat("expected ", expected, ", got ", Describe(*value_)));
}

absl::Status Field::RequireObject(absl::Span<const absl::string_view> allowed) const {
  if (!value_->is_object()) return TypeError("an object");
  for (const auto& [key, unused] : value_->items()) {
    bool known = false;
    for (absl::string_view a : allowed) known = known || a == key;
    if (known) continue;
    if (allowed.empty())
      return Error(absl::StrCat("unknown field ", Quote(key), "; expected none"));
    std::vector<std::string> names;
    for (absl::string_view a : allowed) names.push_back(absl::StrCat("\"", a, "\""));
    return Error(absl::StrCat("unknown field ", Quote(key), "; expected one of ",
                              absl::StrJoin(names, ", ")));
  }
  return absl::OkStatus();
}

bool Field::Has(absl::string_view key) const {
  return value_->is_object() && value_->find(std::string(key)) != value_->end();
}

absl::StatusOr<Field> Field::Member(absl::string_view key) const {
  if (!value_->is_object()) return TypeError("an object");
  if (!Has(key)) return Error(absl::StrCat("missing field \"", key, "\""));
  return MemberOrDie(key);
}

Field Field::MemberOrDie(absl::string_view key) const {
  std::string path = path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
  return Field(value_->find(std::string(key)).value(), std::move(path), source_);
}

absl::StatusOr<size_t> Field::ArraySize(absl::string_view expected) const {
  if (!value_->is_array()) return TypeError(expected);
  return value_->size();
}

Field Field::Element(size_t i) const {
  return Field((*value_)[i], absl::StrCat(path_, "[", i, "]"), source_);
}

Field Field::Labeled(absl::string_view label) const {
  return Field(*value_, absl::StrCat(path_, " (", Quote(label), ")"), source_);
}

absl::StatusOr<int64_t> Field::Int() const {
  if (value_->is_number_unsigned()) {
    const auto u = value_->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Error(absl::StrCat("integer ", u, " is too large (at most ",
                                std::numeric_limits<int64_t>::max(), ")"));
    }
    return static_cast<int64_t>(u);
  }
  if (value_->is_number_integer()) return value_->get<int64_t>();
  return TypeError("an integer");
}

absl::StatusOr<double> Field::Double() const {
  if (value_->is_number()) return value_->get<double>();
  if (value_->is_string()) {
    const auto& s = value_->get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return TypeError("a number (or \"inf\", \"-inf\", \"nan\")");
}

absl::StatusOr<bool> Field::Bool() const {
  if (!value_->is_boolean()) return TypeError("true or false");
  return value_->get<bool>();
}

absl::StatusOr<std::string> Field::String() const {
  if (!value_->is_string()) return TypeError("a string");
  return value_->get<std::string>();
}

absl::StatusOr<std::vector<int64_t>> Field::IntArray() const {
  TS_ASSIGN_OR_RETURN(const size_t n, ArraySize("an array of integers"));
  std::vector<int64_t> values;
  values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Json& e = (*value_)[i];
    if (e.is_number_integer() && !e.is_number_unsigned()) {  // fast path: no path string
      values.push_back(e.get<int64_t>());
      continue;
    }
    TS_ASSIGN_OR_RETURN(const int64_t v, Element(i).Int());
    values.push_back(v);
  }
  return values;
}

absl::StatusOr<std::vector<double>> Field::DoubleArray() const {
  TS_ASSIGN_OR_RETURN(const size_t n, ArraySize("an array of numbers"));
  std::vector<double> values;
  values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Json& e = (*value_)[i];
    if (e.is_number()) {  // fast path: no path string
      values.push_back(e.get<double>());
      continue;
    }
    TS_ASSIGN_OR_RETURN(const double v, Element(i).Double());
    values.push_back(v);
  }
  return values;
}

}  // namespace tessera::graph::json_internal
