// Reading a graph from JSON text: parse, read every field with its type
// checked, build the graph, validate it and check the stored activation shapes
// against shape inference. Every error names the source and the field.
#include <limits>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/graph_json_impl.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph {
namespace {

using base::JsonField;
using base::Quote;
using json_internal::Json;

// The shape and dtype a file states for a tensor (activations may leave them
// to inference).
struct StoredType {
  bool present = false;
  TensorType type;
};

absl::Status Fail(absl::string_view source, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

absl::StatusOr<TensorRole> ParseRole(const JsonField& f) {
  for (TensorRole r : {TensorRole::kInput, TensorRole::kParameter, TensorRole::kActivation,
                       TensorRole::kConstant}) {
    if (f.value().is_string() && f.value().get_ref<const std::string&>() == TensorRoleName(r)) {
      return r;
    }
  }
  return f.TypeError("one of \"input\", \"parameter\", \"activation\", \"constant\"");
}

absl::StatusOr<DType> ParseDTypeField(const JsonField& f) {
  TS_ASSIGN_OR_RETURN(const std::string name, f.String());
  auto dtype = ParseDType(name);
  if (!dtype.ok()) return f.Error(dtype.status().message());
  return *dtype;
}

// Dimensions >= 0, rank <= 16, and a byte size that fits in int64.
absl::StatusOr<Shape> ParseShape(const JsonField& f, DType dtype) {
  TS_ASSIGN_OR_RETURN(Shape shape, f.IntArray());
  if (shape.size() > json_internal::kMaxRank) {
    return f.Error(
        absl::StrCat("rank ", shape.size(), " exceeds the limit of ", json_internal::kMaxRank));
  }
  int64_t bytes = DTypeSize(dtype);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return f.Error(absl::StrCat("dimension ", i, " is ", shape[i], "; dimensions must be >= 0"));
    }
  }
  for (int64_t d : shape) {
    if (d == 0) return shape;
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      return f.Error(absl::StrCat("shape ", ShapeString(shape),
                                  " is too large: its byte size overflows 64 bits"));
    }
  }
  return shape;
}

absl::Status ReadTensor(const JsonField& element, Graph& graph, std::vector<StoredType>& stored) {
  static constexpr absl::string_view kAllowed[] = {"name", "shape", "dtype", "role", "data",
                                                   "batch_axis"};
  TS_RETURN_IF_ERROR(element.RequireObject(kAllowed));
  TS_ASSIGN_OR_RETURN(const JsonField name_field, element.Member("name"));
  Tensor tensor_value;
  TS_ASSIGN_OR_RETURN(tensor_value.name, name_field.String());
  const JsonField f = element.Labeled(tensor_value.name);
  TS_ASSIGN_OR_RETURN(const JsonField role_field, f.Member("role"));
  TS_ASSIGN_OR_RETURN(tensor_value.role, ParseRole(role_field));
  StoredType type;
  // Activations may omit shape and dtype together; inference fills them in.
  const bool typed =
      f.Has("shape") || f.Has("dtype") || tensor_value.role != TensorRole::kActivation;
  if (typed) {
    TS_ASSIGN_OR_RETURN(const JsonField dtype_field, f.Member("dtype"));
    TS_ASSIGN_OR_RETURN(tensor_value.dtype, ParseDTypeField(dtype_field));
    TS_ASSIGN_OR_RETURN(const JsonField shape_field, f.Member("shape"));
    TS_ASSIGN_OR_RETURN(tensor_value.shape, ParseShape(shape_field, tensor_value.dtype));
    type = {true, {tensor_value.shape, tensor_value.dtype}};
  }
  if (f.Has("data")) {
    const JsonField data_field = f.MemberOrDie("data");
    if (!typed) return data_field.Error("data needs the tensor's shape and dtype; state them");
    TS_ASSIGN_OR_RETURN(tensor_value.data, data_field.DoubleArray());
    const int64_t n = NumElements(tensor_value.shape);
    if (static_cast<int64_t>(tensor_value.data.size()) != n) {
      return data_field.Error(absl::StrCat("has ", tensor_value.data.size(), " values; shape ",
                                           ShapeString(tensor_value.shape), " has ", n,
                                           " elements (data is row-major, one value each)"));
    }
  }
  if (f.Has("batch_axis")) {
    const JsonField axis_field = f.MemberOrDie("batch_axis");
    TS_ASSIGN_OR_RETURN(const int64_t axis, axis_field.Int());
    if (tensor_value.role != TensorRole::kInput) {
      return axis_field.Error("only data inputs (role \"input\") have a batch axis");
    }
    if (axis < 0 || axis >= static_cast<int64_t>(tensor_value.shape.size())) {
      return axis_field.Error(absl::StrCat("batch axis ", axis, " is not an axis of shape ",
                                           ShapeString(tensor_value.shape)));
    }
    tensor_value.batch_axis = static_cast<int32_t>(axis);
  }
  auto added = graph.AddTensor(std::move(tensor_value));
  if (!added.ok()) return f.Error(added.status().message());
  stored.push_back(std::move(type));
  return absl::OkStatus();
}

absl::StatusOr<TensorId> ResolveTensor(const JsonField& f, const Graph& graph) {
  TS_ASSIGN_OR_RETURN(const std::string name, f.String());
  const std::optional<TensorId> id = graph.FindTensor(name);
  if (!id)
    return f.Error(absl::StrCat("no tensor is named ", Quote(name), "; list it in \"tensors\""));
  return *id;
}

// Node inputs: tensor names, or null for an absent optional input.
absl::StatusOr<std::vector<TensorId>> ReadInputs(const JsonField& f, const Graph& graph) {
  TS_ASSIGN_OR_RETURN(const size_t n, f.ArraySize("an array of tensor names (or null)"));
  std::vector<TensorId> ids;
  for (size_t i = 0; i < n; ++i) {
    const JsonField e = f.Element(i);
    if (e.value().is_null()) {
      ids.push_back(kNoTensor);
      continue;
    }
    TS_ASSIGN_OR_RETURN(const TensorId id, ResolveTensor(e, graph));
    ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<std::vector<TensorId>> ReadNames(const JsonField& f, const Graph& graph) {
  TS_ASSIGN_OR_RETURN(const size_t n, f.ArraySize("an array of tensor names"));
  std::vector<TensorId> ids;
  for (size_t i = 0; i < n; ++i) {
    const JsonField e = f.Element(i);
    TS_ASSIGN_OR_RETURN(const TensorId id, ResolveTensor(e, graph));
    for (TensorId seen : ids) {
      if (seen == id)
        return e.Error(absl::StrCat("tensor ", Quote(graph.tensor(id).name), " is listed twice"));
    }
    ids.push_back(id);
  }
  return ids;
}

absl::Status ReadNode(const JsonField& element, Graph& graph,
                      absl::flat_hash_set<std::string>& node_names) {
  static constexpr absl::string_view kAllowed[] = {"name", "op", "inputs", "outputs", "attrs"};
  TS_RETURN_IF_ERROR(element.RequireObject(kAllowed));
  Node node;
  TS_ASSIGN_OR_RETURN(const JsonField name_field, element.Member("name"));
  TS_ASSIGN_OR_RETURN(node.name, name_field.String());
  const JsonField f = element.Labeled(node.name);
  if (node.name.empty()) return name_field.Error("a node needs a non-empty name");
  if (!node_names.insert(node.name).second) {
    return f.Error(
        absl::StrCat("node name ", Quote(node.name), " is used twice; names must be unique"));
  }
  TS_ASSIGN_OR_RETURN(const JsonField op_field, f.Member("op"));
  TS_ASSIGN_OR_RETURN(const std::string op, op_field.String());
  auto kind = ParseOpKind(op);
  if (!kind.ok()) {
    return op_field.Error(absl::StrCat(kind.status().message(),
                                       "; the ops Tessera knows are listed in graph/op_kind.h"));
  }
  node.kind = *kind;
  TS_ASSIGN_OR_RETURN(const JsonField inputs_field, f.Member("inputs"));
  TS_ASSIGN_OR_RETURN(node.inputs, ReadInputs(inputs_field, graph));
  const OpSchema& schema = GetOpSchema(node.kind);
  for (size_t i = 0; i < node.inputs.size() && i < static_cast<size_t>(schema.min_inputs); ++i) {
    if (node.inputs[i] != kNoTensor) continue;
    return inputs_field.Element(i).Error(absl::StrCat(
        "input ", i, " of ", schema.name, " is required; null marks only absent optional inputs"));
  }
  TS_ASSIGN_OR_RETURN(const JsonField outputs_field, f.Member("outputs"));
  TS_ASSIGN_OR_RETURN(node.outputs, ReadNames(outputs_field, graph));
  node.attrs = DefaultAttrs(node.kind);
  if (f.Has("attrs")) {
    TS_ASSIGN_OR_RETURN(node.attrs,
                        json_internal::AttrsFromJson(node.kind, f.MemberOrDie("attrs")));
  }
  auto added = graph.AddNode(std::move(node));
  if (!added.ok()) return f.Error(added.status().message());
  return absl::OkStatus();
}

// The header: format tag, version and graph name.
absl::StatusOr<std::string> ReadHeader(const JsonField& root) {
  static constexpr absl::string_view kAllowed[] = {"format",  "version", "name",
                                                   "tensors", "nodes",   "outputs"};
  if (!root.value().is_object()) return root.TypeError(json_internal::kJsonFormat.expected);
  TS_ASSIGN_OR_RETURN(const JsonField format, root.Member("format"));
  if (!format.value().is_string() ||
      format.value().get_ref<const std::string&>() != json_internal::kFormatName) {
    return format.TypeError("\"tessera-graph\" (this is not a Tessera graph file)");
  }
  TS_ASSIGN_OR_RETURN(const JsonField version_field, root.Member("version"));
  TS_ASSIGN_OR_RETURN(const int64_t version, version_field.Int());
  if (version != json_internal::kFormatVersion) {
    return version_field.Error(absl::StrCat("unsupported version ", version,
                                            "; this build of Tessera reads version ",
                                            json_internal::kFormatVersion));
  }
  TS_RETURN_IF_ERROR(root.RequireObject(kAllowed));
  TS_ASSIGN_OR_RETURN(const JsonField name, root.Member("name"));
  return name.String();
}

// Runs inference and compares with the shapes and dtypes the file states.
absl::Status CheckAgainstInference(Graph& graph, const std::vector<StoredType>& stored,
                                   const JsonField& tensors, absl::string_view source) {
  absl::Status inferred = InferShapes(graph);
  if (!inferred.ok()) return Fail(source, inferred.message());
  for (TensorId id = 0; id < graph.num_tensors(); ++id) {
    const Tensor& t = graph.tensor(id);
    if (t.producer == kNoNode || !stored[id].present) continue;
    const TensorType& s = stored[id].type;
    if (s.shape == t.shape && s.dtype == t.dtype) continue;
    return tensors.Element(id).Labeled(t.name).Error(
        absl::StrCat("the file says ", ShapeString(s.shape), " ", DTypeName(s.dtype), " but node ",
                     Quote(graph.node(t.producer).name), " (", OpName(graph.node(t.producer).kind),
                     ") produces ", ShapeString(t.shape), " ", DTypeName(t.dtype),
                     "; fix the stored shape or the node"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Graph> ReadGraph(const Json& doc, absl::string_view source) {
  const JsonField root(doc, source);
  TS_ASSIGN_OR_RETURN(std::string name, ReadHeader(root));
  Graph graph(std::move(name));
  TS_ASSIGN_OR_RETURN(const JsonField tensors, root.Member("tensors"));
  TS_ASSIGN_OR_RETURN(const size_t num_tensors, tensors.ArraySize());
  if (num_tensors > static_cast<size_t>(std::numeric_limits<TensorId>::max())) {
    return tensors.Error("too many tensors");
  }
  std::vector<StoredType> stored;
  for (size_t i = 0; i < num_tensors; ++i) {
    TS_RETURN_IF_ERROR(ReadTensor(tensors.Element(i), graph, stored));
  }
  TS_ASSIGN_OR_RETURN(const JsonField nodes, root.Member("nodes"));
  TS_ASSIGN_OR_RETURN(const size_t num_nodes, nodes.ArraySize());
  absl::flat_hash_set<std::string> node_names;
  for (size_t i = 0; i < num_nodes; ++i) {
    TS_RETURN_IF_ERROR(ReadNode(nodes.Element(i), graph, node_names));
  }
  TS_ASSIGN_OR_RETURN(const JsonField outputs, root.Member("outputs"));
  TS_ASSIGN_OR_RETURN(const std::vector<TensorId> output_ids, ReadNames(outputs, graph));
  for (TensorId id : output_ids) graph.AddOutput(id);
  if (absl::Status valid = graph.Validate(); !valid.ok()) return Fail(source, valid.message());
  TS_RETURN_IF_ERROR(CheckAgainstInference(graph, stored, tensors, source));
  return graph;
}

}  // namespace

absl::StatusOr<Graph> GraphFromJson(absl::string_view text, absl::string_view source_name) {
  TS_ASSIGN_OR_RETURN(const Json doc,
                      base::ParseJson(text, source_name, json_internal::kJsonFormat));
  return ReadGraph(doc, source_name);
}

}  // namespace tessera::graph
