// Builds small ONNX models in C++ for the importer's tests.
//
//   OnnxModel m(13);
//   m.Input("x", {"batch", 3, 4});
//   m.Node("Shape", {"x"}, {"s"});
//   m.ConstI64("idx", {}, {0});
//   m.Output("y");
//   auto g = m.Import({.batch = 5});
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph::testing {

using Dim = std::variant<int64_t, std::string>;

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  void Input(const std::string& name, const std::vector<Dim>& dims,
             int elem = onnx::TensorProto::FLOAT) {
    auto* v = graph().add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d)) {
        dim->set_dim_value(std::get<int64_t>(d));
      } else {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
  }

  void Output(const std::string& name) { graph().add_output()->set_name(name); }

  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? "/" + op + "_" + std::to_string(graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  static onnx::TensorProto I64Tensor(const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& values) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t.add_dims(d);
    for (int64_t v : values) t.add_int64_data(v);
    return t;
  }

  static onnx::TensorProto F32Tensor(const std::vector<int64_t>& dims,
                                     const std::vector<float>& values) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    for (float v : values) t.add_float_data(v);
    return t;
  }

  // A Constant node writing `name`.
  void ConstI64(const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& values) {
    AttrTensor(Node("Constant", {}, {name}, "/Constant_" + name), "value", I64Tensor(dims, values));
  }
  void ConstF32(const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<float>& values) {
    AttrTensor(Node("Constant", {}, {name}, "/Constant_" + name), "value", F32Tensor(dims, values));
  }

  void Initializer(onnx::TensorProto t, const std::string& name) {
    t.set_name(name);
    *graph().add_initializer() = std::move(t);
  }

  static void AttrInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void AttrInts(onnx::NodeProto& n, const std::string& name,
                       const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void AttrFloat(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void AttrString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void AttrTensor(onnx::NodeProto& n, const std::string& name, onnx::TensorProto t) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = std::move(t);
  }

  std::string Bytes() const { return model_.SerializeAsString(); }

  absl::StatusOr<Graph> Import(const OnnxImportOptions& options = {}) const {
    return ImportOnnxBytes(Bytes(), "test.onnx", options);
  }

 private:
  onnx::ModelProto model_;
};

// The only node of `g` of kind `kind` (nullptr unless exactly one).
inline const Node* OnlyNode(const Graph& g, OpKind kind) {
  const Node* found = nullptr;
  for (const Node& n : g.nodes()) {
    if (n.kind != kind) continue;
    if (found != nullptr) return nullptr;
    found = &n;
  }
  return found;
}

inline const Tensor& Named(const Graph& g, const std::string& name) {
  static const Tensor missing{.name = "<missing>"};
  auto id = g.FindTensor(name);
  return id ? g.tensor(*id) : missing;
}

}  // namespace tessera::graph::testing
