// The "op_times" object of a cluster file (op_times_json_impl.h).
#include "tessera/costmodel/op_times_json_impl.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::costmodel {
namespace {

using base::JsonField;
using OrderedJson = nlohmann::ordered_json;

constexpr double kMaxSeconds = 3600;  // one op, or one byte's share of one, in a step

absl::StatusOr<double> Seconds(const JsonField& f) { return f.NumberInRange(0, kMaxSeconds); }

absl::StatusOr<MeasuredOp> ReadOp(const JsonField& f) {
  TS_ASSIGN_OR_RETURN(const size_t n, f.ArraySize("[forward_s, backward_s]"));
  if (n != 2) return f.TypeError("[forward_s, backward_s]");
  MeasuredOp op;
  TS_ASSIGN_OR_RETURN(op.forward_s, Seconds(f.Element(0)));
  TS_ASSIGN_OR_RETURN(op.backward_s, Seconds(f.Element(1)));
  return op;
}

absl::StatusOr<MeasuredUpdate> ReadUpdate(const JsonField& f) {
  TS_RETURN_IF_ERROR(f.RequireObject({"optimizer", "seconds_per_param_byte"}));
  MeasuredUpdate u;
  TS_ASSIGN_OR_RETURN(const JsonField optimizer, f.Member("optimizer"));
  TS_ASSIGN_OR_RETURN(const std::string name, optimizer.String());
  absl::StatusOr<OptimizerKind> kind = ParseOptimizerKind(name);
  if (!kind.ok()) return optimizer.Error(kind.status().message());
  u.optimizer = *kind;
  TS_ASSIGN_OR_RETURN(const JsonField rate, f.Member("seconds_per_param_byte"));
  TS_ASSIGN_OR_RETURN(u.seconds_per_param_byte, Seconds(rate));
  return u;
}

absl::StatusOr<MeasuredOpTimes> ReadTable(const JsonField& f) {
  TS_RETURN_IF_ERROR(f.RequireObject({"share", "ops", "update", "bucket_copy_s_per_byte"}));
  MeasuredOpTimes t;
  TS_ASSIGN_OR_RETURN(const JsonField share, f.Member("share"));
  TS_ASSIGN_OR_RETURN(t.share, share.NumberAbove(0, 1));
  TS_ASSIGN_OR_RETURN(const JsonField ops, f.Member("ops"));
  TS_RETURN_IF_ERROR(ops.RequireOpenObject());
  for (const auto& [node, unused] : ops.value().items()) {
    TS_ASSIGN_OR_RETURN(t.ops[node], ReadOp(ops.MemberOrDie(node)));
  }
  if (f.Has("update")) {
    TS_ASSIGN_OR_RETURN(t.update, ReadUpdate(f.MemberOrDie("update")));
  }
  if (f.Has("bucket_copy_s_per_byte")) {
    TS_ASSIGN_OR_RETURN(t.bucket_copy_s_per_byte,
                        Seconds(f.MemberOrDie("bucket_copy_s_per_byte")));
  }
  return t;
}

}  // namespace

absl::StatusOr<std::map<std::string, MeasuredOpTimes>> ReadOpTimes(const JsonField& field) {
  TS_RETURN_IF_ERROR(field.RequireOpenObject());
  std::map<std::string, MeasuredOpTimes> out;
  for (const auto& [key, unused] : field.value().items()) {
    TS_ASSIGN_OR_RETURN(out[key], ReadTable(field.MemberOrDie(key)));
  }
  return out;
}

OrderedJson OpTimesJson(const std::map<std::string, MeasuredOpTimes>& op_times) {
  OrderedJson doc = OrderedJson::object();
  for (const auto& [key, t] : op_times) {
    OrderedJson ops = OrderedJson::object();
    for (const auto& [node, op] : t.ops) {
      ops[node] = OrderedJson::array({op.forward_s, op.backward_s});
    }
    OrderedJson table = {{"share", t.share}, {"ops", std::move(ops)}};
    if (t.update.has_value()) {
      table["update"] = {{"optimizer", std::string(OptimizerName(t.update->optimizer))},
                         {"seconds_per_param_byte", t.update->seconds_per_param_byte}};
    }
    if (t.bucket_copy_s_per_byte > 0) table["bucket_copy_s_per_byte"] = t.bucket_copy_s_per_byte;
    doc[key] = std::move(table);
  }
  return doc;
}

}  // namespace tessera::costmodel
