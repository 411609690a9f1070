// Reading JSON files (json_reader.h): the nesting guard, the parse, and typed fields with
// their path in every error.
#include "tessera/base/json_reader.h"

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"

namespace tessera::base {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxQuoted = 64;
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

absl::Status Fail(absl::string_view source, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

// Rejects nesting deeper than `format.max_nesting` before the parser sees the text, so no
// later step can recurse deeply on hostile input. Brackets inside strings do not count.
absl::Status CheckNesting(absl::string_view text, absl::string_view source,
                          const JsonFormat& format) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > format.max_nesting) {
        return Fail(source, absl::StrCat("values nest more than ", format.max_nesting,
                                         " levels deep (at byte ", i, "); expected ",
                                         format.expected));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

// Dumps a scalar; never throws (invalid UTF-8 is replaced).
std::string DumpScalar(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The elements of `field`, an array, each read by `read`; elements that `plain` accepts are
// taken directly (the fast path for long arrays: no path string per element).
template <class T>
absl::StatusOr<std::vector<T>> ReadArray(const JsonField& field, absl::string_view expected,
                                         bool (*plain)(const Json&),
                                         absl::StatusOr<T> (JsonField::*read)() const) {
  TS_ASSIGN_OR_RETURN(const size_t n, field.ArraySize(expected));
  std::vector<T> values;
  values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Json& e = field.value()[i];
    if (plain(e)) {
      values.push_back(e.get<T>());
      continue;
    }
    TS_ASSIGN_OR_RETURN(const T v, (field.Element(i).*read)());
    values.push_back(v);
  }
  return values;
}

}  // namespace

absl::StatusOr<Json> ParseJson(absl::string_view text, absl::string_view source,
                               const JsonFormat& format) {
  if (text.find_first_not_of(" \t\r\n") == absl::string_view::npos) {
    return Fail(source, absl::StrCat("the file is empty; expected ", format.expected));
  }
  TS_RETURN_IF_ERROR(CheckNesting(text, source, format));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, ...".
    absl::string_view what = e.what();
    const size_t bracket = what.find("] ");
    if (absl::StartsWith(what, "[json.exception.") && bracket != absl::string_view::npos) {
      what.remove_prefix(bracket + 2);
    }
    return Fail(source, absl::StrCat("not valid JSON: ", what));
  }
}

std::string Quote(absl::string_view text) {
  if (text.size() <= kMaxQuoted) return absl::StrCat("\"", text, "\"");
  size_t cut = kMaxQuoted;
  // Do not cut a UTF-8 sequence in half: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat("\"", text.substr(0, cut), "...\"");
}

std::string DescribeJson(const Json& value) {
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

absl::Status JsonField::Error(absl::string_view what) const {
  if (path_.empty()) return Fail(source_, what);
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", path_, ": ", what));
}

absl::Status JsonField::TypeError(absl::string_view expected) const {
  return Error(absl::StrCat("expected ", expected, ", got ", DescribeJson(*value_)));
}

absl::Status JsonField::RequireObject(absl::Span<const absl::string_view> allowed) const {
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

absl::Status JsonField::RequireOpenObject() const {
  if (!value_->is_object()) return TypeError("an object");
  return absl::OkStatus();
}

bool JsonField::Has(absl::string_view key) const {
  return value_->is_object() && value_->find(std::string(key)) != value_->end();
}

absl::StatusOr<JsonField> JsonField::Member(absl::string_view key) const {
  if (!value_->is_object()) return TypeError("an object");
  if (!Has(key)) return Error(absl::StrCat("missing field \"", key, "\""));
  return MemberOrDie(key);
}

JsonField JsonField::MemberOrDie(absl::string_view key) const {
  std::string path = path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
  return JsonField(value_->find(std::string(key)).value(), source_, std::move(path));
}

absl::StatusOr<size_t> JsonField::ArraySize(absl::string_view expected) const {
  if (!value_->is_array()) return TypeError(expected);
  return value_->size();
}

JsonField JsonField::Element(size_t i) const {
  return JsonField((*value_)[i], source_, absl::StrCat(path_, "[", i, "]"));
}

JsonField JsonField::Labeled(absl::string_view label) const {
  return JsonField(*value_, source_, absl::StrCat(path_, " (", Quote(label), ")"));
}

absl::StatusOr<int64_t> JsonField::Int() const {
  if (value_->is_number_unsigned()) {
    const auto u = value_->get<uint64_t>();
    if (u > static_cast<uint64_t>(kMaxInt64)) {
      return Error(absl::StrCat("integer ", u, " is too large (at most ", kMaxInt64, ")"));
    }
    return static_cast<int64_t>(u);
  }
  if (value_->is_number_integer()) return value_->get<int64_t>();
  return TypeError("an integer");
}

absl::StatusOr<double> JsonField::Double() const {
  if (value_->is_number()) return value_->get<double>();
  if (value_->is_string()) {
    const auto& s = value_->get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return TypeError("a number (or \"inf\", \"-inf\", \"nan\")");
}

absl::StatusOr<bool> JsonField::Bool() const {
  if (!value_->is_boolean()) return TypeError("true or false");
  return value_->get<bool>();
}

absl::StatusOr<std::string> JsonField::String() const {
  if (!value_->is_string()) return TypeError("a string");
  return value_->get<std::string>();
}

absl::StatusOr<std::string> JsonField::NonEmptyString() const {
  TS_ASSIGN_OR_RETURN(std::string s, String());
  if (s.empty()) return Error("expected a non-empty string");
  return s;
}

absl::StatusOr<std::vector<int64_t>> JsonField::IntArray() const {
  return ReadArray<int64_t>(
      *this, "an array of integers",
      [](const Json& e) { return e.is_number_integer() && !e.is_number_unsigned(); },
      &JsonField::Int);
}

absl::StatusOr<std::vector<double>> JsonField::DoubleArray() const {
  return ReadArray<double>(
      *this, "an array of numbers", [](const Json& e) { return e.is_number(); },
      &JsonField::Double);
}

absl::Status JsonField::RangeError(absl::string_view allowed) const {
  return Error(absl::StrCat("got ", DescribeJson(*value_), "; allowed: ", allowed));
}

absl::StatusOr<int64_t> JsonField::IntInRange(int64_t min, int64_t max, JsonInteger form) const {
  const auto out_of_range = [&] { return RangeError(absl::StrCat(min, " to ", max)); };
  int64_t x = 0;
  if (value_->is_number_unsigned()) {
    const auto u = value_->get<uint64_t>();
    if (u > static_cast<uint64_t>(kMaxInt64)) return out_of_range();
    x = static_cast<int64_t>(u);
  } else if (value_->is_number_integer()) {
    x = value_->get<int64_t>();
  } else if (value_->is_number_float() && form == JsonInteger::kIntegralNumber) {
    const double d = value_->get<double>();
    if (d != std::floor(d)) return TypeError("an integer");
    // Compared as doubles first: a double at or past 2^63 has no int64 to convert to.
    if (!(d >= -0x1p63 && d < 0x1p63)) return out_of_range();
    x = static_cast<int64_t>(d);
  } else {
    return TypeError("an integer");
  }
  if (x < min || x > max) return out_of_range();
  return x;
}

absl::StatusOr<double> JsonField::Number(double min, bool min_exclusive, double max) const {
  if (!value_->is_number()) return TypeError("a number");
  const double x = value_->get<double>();
  const bool low = min_exclusive ? !(x > min) : !(x >= min);
  if (low || !(x <= max) || !std::isfinite(x)) {
    return RangeError(absl::StrCat(min_exclusive ? "> " : ">= ", min, " and <= ", max));
  }
  return x;
}

absl::StatusOr<double> JsonField::NumberInRange(double min, double max) const {
  return Number(min, /*min_exclusive=*/false, max);
}

absl::StatusOr<double> JsonField::NumberAbove(double min, double max) const {
  return Number(min, /*min_exclusive=*/true, max);
}

}  // namespace tessera::base
