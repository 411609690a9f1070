// The "attrs" object of a node: one member per field of the op's attribute
// struct. Each struct's fields are listed once (Fields below) and that list
// drives both writing and reading, so the two cannot drift apart.
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/graph_json_impl.h"

namespace tessera::graph::json_internal {
namespace {

using base::JsonField;

// ---- Field lists: visitor(name, member) for every member of each struct. ----
template <class V>
void Fields(std::monostate&, V&) {}
template <class V>
void Fields(ConvAttrs& a, V& v) {
  v("kernel_shape", a.kernel_shape), v("strides", a.strides), v("pads", a.pads);
  v("dilations", a.dilations), v("groups", a.groups);
}
template <class V>
void Fields(PoolAttrs& a, V& v) {
  v("kernel_shape", a.kernel_shape), v("strides", a.strides), v("pads", a.pads);
  v("ceil_mode", a.ceil_mode), v("count_include_pad", a.count_include_pad);
}
template <class V>
void Fields(GemmAttrs& a, V& v) {
  v("trans_a", a.trans_a), v("trans_b", a.trans_b), v("alpha", a.alpha), v("beta", a.beta);
}
template <class V>
void Fields(LstmAttrs& a, V& v) {
  v("hidden_size", a.hidden_size), v("direction", a.direction), v("layout", a.layout);
}
template <class V>
void Fields(BatchNormAttrs& a, V& v) {
  v("epsilon", a.epsilon), v("momentum", a.momentum);
}
template <class V>
void Fields(LayerNormAttrs& a, V& v) {
  v("axis", a.axis), v("epsilon", a.epsilon);
}
template <class V>
void Fields(AxisAttrs& a, V& v) {
  v("axis", a.axis);
}
template <class V>
void Fields(AxesAttrs& a, V& v) {
  v("axes", a.axes), v("keepdims", a.keepdims);
}
template <class V>
void Fields(ReshapeAttrs& a, V& v) {
  v("shape", a.shape);
}
template <class V>
void Fields(PermAttrs& a, V& v) {
  v("perm", a.perm);
}
template <class V>
void Fields(ExpandAttrs& a, V& v) {
  v("shape", a.shape);
}
template <class V>
void Fields(SliceAttrs& a, V& v) {
  v("starts", a.starts), v("ends", a.ends), v("axes", a.axes), v("steps", a.steps);
}
template <class V>
void Fields(SplitAttrs& a, V& v) {
  v("axis", a.axis), v("sizes", a.sizes);
}
template <class V>
void Fields(PadAttrs& a, V& v) {
  v("pads", a.pads), v("mode", a.mode), v("value", a.value);
}
template <class V>
void Fields(ScalarAttrs& a, V& v) {
  v("alpha", a.alpha), v("beta", a.beta);
}
template <class V>
void Fields(CastAttrs& a, V& v) {
  v("to", a.to);
}
template <class V>
void Fields(LossAttrs& a, V& v) {
  v("reduction", a.reduction), v("blank", a.blank), v("ignore_index", a.ignore_index);
}

// ---- Enumerations, written by name. ----
absl::string_view EnumName(LstmDirection d) {
  switch (d) {
    case LstmDirection::kForward:
      return "forward";
    case LstmDirection::kReverse:
      return "reverse";
    case LstmDirection::kBidirectional:
      return "bidirectional";
  }
  return "?";
}
absl::string_view EnumName(PadMode m) {
  switch (m) {
    case PadMode::kConstant:
      return "constant";
    case PadMode::kReflect:
      return "reflect";
    case PadMode::kEdge:
      return "edge";
  }
  return "?";
}
absl::string_view EnumName(Reduction r) {
  switch (r) {
    case Reduction::kMean:
      return "mean";
    case Reduction::kSum:
      return "sum";
    case Reduction::kNone:
      return "none";
  }
  return "?";
}
absl::string_view EnumName(DType d) { return DTypeName(d); }

std::vector<LstmDirection> EnumValues(LstmDirection) {
  return {LstmDirection::kForward, LstmDirection::kReverse, LstmDirection::kBidirectional};
}
std::vector<PadMode> EnumValues(PadMode) {
  return {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge};
}
std::vector<Reduction> EnumValues(Reduction) {
  return {Reduction::kMean, Reduction::kSum, Reduction::kNone};
}
std::vector<DType> EnumValues(DType) {
  return {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64, DType::kBool};
}

// ---- Writing. ----
struct Writer {
  OrderedJson& out;
  void operator()(const char* key, bool v) { out[key] = v; }
  void operator()(const char* key, int64_t v) { out[key] = v; }
  void operator()(const char* key, double v) { out[key] = DoubleToJson(v); }
  void operator()(const char* key, const std::vector<int64_t>& v) { out[key] = v; }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(const char* key, E v) { out[key] = std::string(EnumName(v)); }
};

// ---- Reading. ----
absl::Status Read(const JsonField& f, bool& out) {
  TS_ASSIGN_OR_RETURN(out, f.Bool());
  return absl::OkStatus();
}
absl::Status Read(const JsonField& f, int64_t& out) {
  TS_ASSIGN_OR_RETURN(out, f.Int());
  return absl::OkStatus();
}
absl::Status Read(const JsonField& f, double& out) {
  TS_ASSIGN_OR_RETURN(out, f.Double());
  return absl::OkStatus();
}
absl::Status Read(const JsonField& f, std::vector<int64_t>& out) {
  TS_ASSIGN_OR_RETURN(out, f.IntArray());
  return absl::OkStatus();
}
template <class E>
requires std::is_enum_v<E> absl::Status Read(const JsonField& f, E& out) {
  std::vector<std::string> names;
  for (E e : EnumValues(E{})) {
    if (f.value().is_string() && f.value().template get_ref<const std::string&>() == EnumName(e)) {
      out = e;
      return absl::OkStatus();
    }
    names.push_back(absl::StrCat("\"", EnumName(e), "\""));
  }
  return f.TypeError(absl::StrCat("one of ", absl::StrJoin(names, ", ")));
}

struct Reader {
  const JsonField& attrs;
  absl::Status status;
  std::vector<absl::string_view> keys;  // every member the struct has
  template <class T>
  void operator()(const char* key, T& member) {
    keys.push_back(key);
    if (status.ok() && attrs.Has(key)) status = Read(attrs.MemberOrDie(key), member);
  }
};

}  // namespace

OrderedJson AttrsToJson(const OpAttrs& attrs) {
  OrderedJson out = OrderedJson::object();
  Writer writer{out};
  OpAttrs copy = attrs;  // Fields takes mutable structs (shared with reading)
  std::visit([&](auto& a) { Fields(a, writer); }, copy);
  return out;
}

absl::StatusOr<OpAttrs> AttrsFromJson(OpKind kind, const JsonField& attrs) {
  if (!attrs.value().is_object()) return attrs.TypeError("an object");
  OpAttrs result = DefaultAttrs(kind);
  Reader reader{attrs, absl::OkStatus(), {}};
  std::visit([&](auto& a) { Fields(a, reader); }, result);
  TS_RETURN_IF_ERROR(reader.status);
  if (reader.keys.empty() && !attrs.value().empty()) {
    return attrs.Error(absl::StrCat(OpName(kind), " takes no attributes; expected {}"));
  }
  TS_RETURN_IF_ERROR(attrs.RequireObject(reader.keys));
  return result;
}

}  // namespace tessera::graph::json_internal
