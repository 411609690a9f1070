// Internal to ONNX import: the node-by-node conversion of one ONNX graph into a
// Tessera graph, with the value table used for constant folding.
//
//   Importer importer(model.graph(), opset);
//   TS_ASSIGN_OR_RETURN(Graph g, importer.Run(inputs, order));
//   importer.candidates();   // tensors that may be parameters (graph inputs, initializers)
//
// Every ONNX value is either a known constant (ConstTensor, folded; it becomes an
// IR tensor of role kConstant only when an IR node reads it) or an IR tensor.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/onnx/batch_rewrite.h"
#include "tessera/graph/onnx/const_tensor.h"
#include "tessera/graph/onnx/node_attrs.h"

namespace tessera::graph::onnx_import {

// A graph input or initializer, with its symbolic dimensions already resolved.
struct InputDecl {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  bool is_initializer = false;
  // Data inputs: the batch dimension (docs/onnx-import.md), -1 when not located.
  int batch_axis = -1;
  // Values that take part in folding (integer initializers and float scalars).
  std::optional<ConstTensor> values;
  // Values of a larger float initializer, copied into Tensor::data when small.
  std::vector<double> data;
};

// A tensor that may be a parameter: a graph input or a float initializer.
struct Candidate {
  TensorId tensor = kNoTensor;
  bool is_initializer = false;
};

struct UnsupportedUse {
  std::string op_type;
  std::string node;
  std::string note;  // e.g. "supported only on constants"
};

struct Value {
  TensorId tensor = kNoTensor;
  std::optional<ConstTensor> constant;
  DType dtype = DType::kF32;
  Shape shape;
  bool poisoned = false;  // computed by an unsupported node
};

class Importer;

// What an op translation sees: one ONNX node and the importer.
class NodeCtx {
 public:
  NodeCtx(Importer& importer, const onnx::NodeProto& node, std::string name)
      : importer_(importer), node_(node), name_(std::move(name)), attrs_(node, name_) {}

  const onnx::NodeProto& proto() const { return node_; }
  const std::string& name() const { return name_; }
  const std::string& op_type() const { return node_.op_type(); }
  const NodeAttrs& attrs() const { return attrs_; }
  int64_t opset() const;
  int num_inputs() const { return node_.input_size(); }
  int num_outputs() const { return node_.output_size(); }
  bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  bool has_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }
  const Value* input_value(int i) const;  // nullptr when absent
  // Known values of input i, or nullptr when absent or computed from data.
  const ConstTensor* Const(int i) const;
  // Input i as integers, required to be known at import time; `what` names it.
  absl::StatusOr<std::vector<int64_t>> ConstInts(int i, absl::string_view what) const;
  absl::StatusOr<double> ConstScalar(int i, absl::string_view what) const;
  const Shape& shape(int i) const { return input_value(i)->shape; }
  DType dtype(int i) const { return input_value(i)->dtype; }
  // The IR tensor of input i (a constant is materialized as a kConstant tensor);
  // kNoTensor when absent and optional.
  absl::StatusOr<TensorId> Tensor(int i) const;
  absl::StatusOr<TensorId> OptionalTensor(int i) const;

  // Adds the IR node `kind` writing the ONNX outputs (all of them, or the first
  // `num_outputs` when >= 0); absent outputs get generated names.
  absl::Status Emit(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                    int num_outputs = -1);
  // Adds an IR node writing one new intermediate tensor; returns its id.
  absl::StatusOr<TensorId> EmitTemp(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                                    absl::string_view suffix);
  // Adds an IR node writing output `out` of this ONNX node.
  absl::Status EmitOutput(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs, int out,
                          absl::string_view suffix);
  absl::Status SetConst(int out, ConstTensor value);
  // Output `out` is the same value as input `in` (no IR node).
  absl::Status Alias(int out, int in);

  // InvalidArgument "node 'n' (Op): <message>".
  absl::Status Error(absl::string_view message) const;
  Importer& importer() { return importer_; }

 private:
  Importer& importer_;
  const onnx::NodeProto& node_;
  std::string name_;
  NodeAttrs attrs_;
};

class Importer {
 public:
  Importer(const onnx::GraphProto& graph, int64_t opset) : proto_(graph), opset_(opset) {}

  // Converts the nodes in `order` (indices into graph.node(), topological).
  absl::StatusOr<Graph> Run(const std::vector<InputDecl>& inputs, const std::vector<int>& order);

  // Re-derives baked batch constants during Run (batch_rewrite.h); not owned.
  void set_batch_rewriter(BatchRewriter* r) { batch_rewriter_ = r; }
  // Shapes and folded values of every value after Run (the reference for a BatchRewriter).
  ImportRecord Record() const;

  const std::vector<Candidate>& candidates() const { return candidates_; }
  const std::vector<UnsupportedUse>& unsupported() const { return unsupported_; }
  int64_t opset() const { return opset_; }

  // --- used by NodeCtx ---
  Value* Find(const std::string& name);
  absl::StatusOr<TensorId> Materialize(const std::string& name);
  absl::StatusOr<TensorId> NewActivation(const std::string& name);
  std::string UniqueTensorName(absl::string_view base);
  absl::StatusOr<Value*> Define(const std::string& name);
  Graph& graph() { return graph_; }
  bool IsCandidate(TensorId id) const { return candidate_index_.contains(id); }
  void AddCandidate(Candidate c);
  // ONNX value `name` is a loss: Run lists the graph outputs that are losses first (the
  // training program's loss is the first output).
  void MarkLoss(const std::string& name) { losses_.insert(name); }

 private:
  absl::Status AddInputs(const std::vector<InputDecl>& inputs);
  absl::Status ConvertNode(const onnx::NodeProto& node, const std::string& name);
  void Poison(const onnx::NodeProto& node);
  void RecordUnsupported(const onnx::NodeProto& node, const std::string& name,
                         std::string note);
  std::string NodeName(const onnx::NodeProto& node, int index);

  const onnx::GraphProto& proto_;
  int64_t opset_;
  Graph graph_;
  std::deque<Value> values_;  // a deque: pointers stay valid as values are added
  absl::flat_hash_map<std::string, int> value_index_;
  absl::flat_hash_set<std::string> node_names_;
  std::vector<Candidate> candidates_;
  absl::flat_hash_set<TensorId> candidate_index_;
  std::vector<UnsupportedUse> unsupported_;
  absl::flat_hash_set<std::string> unsupported_types_;
  absl::flat_hash_set<std::string> losses_;
  int64_t name_counter_ = 0;
  BatchRewriter* batch_rewriter_ = nullptr;

 public:
  // Counts `n` folded elements against kMaxFoldedTotal.
  absl::Status ChargeFolded(int64_t n);

 private:
  int64_t folded_total_ = 0;
};

}  // namespace tessera::graph::onnx_import
