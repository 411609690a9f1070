// Writing a graph as JSON text. Layout: one line per tensor and per node, so
// files stay readable and diff well:
//   {
//     "format": "tessera-graph",
//     "version": 1,
//     "name": "mlp",
//     "tensors": [
//       {"name": "x", "shape": [32, 784], "dtype": "f32", "role": "input"},
//       ...
//     ],
//     "nodes": [
//       {"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {}}
//     ],
//     "outputs": ["y"]
//   }
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/graph_json_impl.h"

namespace tessera::graph {
namespace {

using json_internal::OrderedJson;

// Compact JSON with a space after ':' and ','. Recurses only over the shallow
// values built below. Invalid UTF-8 in names is replaced, never thrown.
void AppendInline(const OrderedJson& value, std::string& out) {
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, member] : value.items()) {
      if (!first) out += ", ";
      first = false;
      AppendInline(OrderedJson(key), out);
      out += ": ";
      AppendInline(member, out);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out += ", ";
      AppendInline(value[i], out);
    }
    out += ']';
  } else {
    out += value.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
  }
}

std::string Inline(const OrderedJson& value) {
  std::string out;
  AppendInline(value, out);
  return out;
}

// The shortest text that reads back to the same double (std::to_chars), in the
// style of the attributes: "1.0" not "1", "-0.0", non-finite values as strings.
void AppendDouble(double v, std::string& out) {
  if (!std::isfinite(v)) {
    out += std::isnan(v) ? "\"nan\"" : (v > 0 ? "\"inf\"" : "\"-inf\"");
    return;
  }
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  const size_t n = ec == std::errc() ? static_cast<size_t>(end - buffer) : 0;
  out.append(buffer, n);
  if (std::memchr(buffer, '.', n) == nullptr && std::memchr(buffer, 'e', n) == nullptr) {
    out += ".0";
  }
}

// One line per tensor; data (possibly millions of values) is formatted directly.
std::string TensorLine(const Tensor& t) {
  OrderedJson j = OrderedJson::object();
  j["name"] = t.name;
  j["shape"] = t.shape;
  j["dtype"] = std::string(DTypeName(t.dtype));
  j["role"] = std::string(TensorRoleName(t.role));
  if (t.role == TensorRole::kInput && t.batch_axis != 0) j["batch_axis"] = t.batch_axis;
  std::string line = Inline(j);
  if (t.data.empty()) return line;
  line.pop_back();  // the closing brace
  line += ", \"data\": [";
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (i > 0) line += ", ";
    AppendDouble(t.data[i], line);
  }
  line += "]}";
  return line;
}

OrderedJson NameOrNull(const Graph& graph, TensorId id) {
  if (id < 0 || id >= graph.num_tensors()) return nullptr;
  return graph.tensor(id).name;
}

OrderedJson NodeToJson(const Graph& graph, const Node& n) {
  OrderedJson j = OrderedJson::object();
  j["name"] = n.name;
  j["op"] = std::string(OpName(n.kind));
  OrderedJson inputs = OrderedJson::array();
  for (TensorId t : n.inputs) inputs.push_back(NameOrNull(graph, t));
  j["inputs"] = std::move(inputs);
  OrderedJson outputs = OrderedJson::array();
  for (TensorId t : n.outputs) outputs.push_back(NameOrNull(graph, t));
  j["outputs"] = std::move(outputs);
  j["attrs"] = json_internal::AttrsToJson(n.attrs);
  return j;
}

// "  \"key\": [\n    item,\n    item\n  ]" with one inline item per line.
void AppendList(absl::string_view key, const std::vector<std::string>& items, std::string& out) {
  absl::StrAppend(&out, "  \"", key, "\": [");
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "\n    " : ",\n    ", items[i]);
  }
  absl::StrAppend(&out, items.empty() ? "]" : "\n  ]");
}

}  // namespace

std::string GraphToJson(const Graph& graph) {
  std::string out = "{\n";
  absl::StrAppend(&out, "  \"format\": ", Inline(std::string(json_internal::kFormatName)), ",\n");
  absl::StrAppend(&out, "  \"version\": ", json_internal::kFormatVersion, ",\n");
  absl::StrAppend(&out, "  \"name\": ", Inline(graph.name()), ",\n");
  std::vector<std::string> items;
  for (const Tensor& t : graph.tensors()) items.push_back(TensorLine(t));
  AppendList("tensors", items, out);
  out += ",\n";
  items.clear();
  for (const Node& n : graph.nodes()) items.push_back(Inline(NodeToJson(graph, n)));
  AppendList("nodes", items, out);
  out += ",\n";
  OrderedJson outputs = OrderedJson::array();
  for (TensorId t : graph.outputs()) outputs.push_back(NameOrNull(graph, t));
  absl::StrAppend(&out, "  \"outputs\": ", Inline(outputs), "\n}\n");
  return out;
}

}  // namespace tessera::graph

namespace tessera::graph::json_internal {

OrderedJson DoubleToJson(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

}  // namespace tessera::graph::json_internal
