// The dataflow graph: owns its tensors and nodes; ids index into it.
//
//   Graph g("mlp");
//   TensorId x = *g.AddTensor({.name = "x", .shape = {32, 784}, .role = TensorRole::kInput});
//   TensorId w = *g.AddTensor({.name = "w", .shape = {784, 10}, .role = TensorRole::kParameter});
//   TensorId y = *g.AddTensor({.name = "y"});
//   g.AddNode({.name = "mm", .kind = OpKind::kMatMul, .inputs = {x, w}, .outputs = {y}});
//   g.AddOutput(y);
//   TS_RETURN_IF_ERROR(InferShapes(g));   // graph/shape_inference.h
//
// Most programs build graphs with the GraphBuilder (graph/builder.h) instead.
#pragma once

#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/graph/tensor.h"

namespace tessera::graph {

class Graph {
 public:
  explicit Graph(std::string name = "") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Adds a tensor; its name must be non-empty and unique in the graph.
  absl::StatusOr<TensorId> AddTensor(Tensor tensor);
  // Adds a node. Inputs must exist (or be kNoTensor where optional); outputs must
  // exist, be activations and have no producer yet. The input count must fit
  // the op's schema and the attributes must be of the op's type.
  absl::StatusOr<NodeId> AddNode(Node node);
  void AddOutput(TensorId id);

  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Tensor& tensor(TensorId id) const;
  Tensor& mutable_tensor(TensorId id);
  const Node& node(NodeId id) const;
  Node& mutable_node(NodeId id);
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<TensorId>& outputs() const { return outputs_; }

  std::optional<TensorId> FindTensor(absl::string_view name) const;
  std::vector<TensorId> TensorsWithRole(TensorRole role) const;
  // For each tensor, the nodes that read it (in node order).
  std::vector<std::vector<NodeId>> Consumers() const;
  // Nodes ordered so each comes after the producers of its inputs; an error
  // naming a node on the cycle when there is one.
  absl::StatusOr<std::vector<NodeId>> TopologicalOrder() const;
  // Structural checks: ids in range, one producer per activation, no cycles,
  // inputs/parameters/constants produced by nobody, every activation that a
  // node reads or the graph outputs produced by some node.
  absl::Status Validate() const;

 private:
  std::string name_;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::vector<TensorId> outputs_;
  absl::flat_hash_map<std::string, TensorId> tensor_index_;
};

}  // namespace tessera::graph
