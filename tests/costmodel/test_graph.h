// Test helper: hand-built graphs through Graph::AddTensor / AddNode and InferShapes
// (deliberately not the GraphBuilder), with a failure on any error.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tessera/graph/graph.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::testing {

class TestGraph {
 public:
  graph::Graph g{"test"};

  graph::TensorId Input(const std::string& name, graph::Shape shape,
                        graph::DType dtype = graph::DType::kF32) {
    return Add(name, std::move(shape), dtype, graph::TensorRole::kInput);
  }
  graph::TensorId Param(const std::string& name, graph::Shape shape,
                        graph::DType dtype = graph::DType::kF32) {
    return Add(name, std::move(shape), dtype, graph::TensorRole::kParameter);
  }
  graph::TensorId Const(const std::string& name, graph::Shape shape,
                        graph::DType dtype = graph::DType::kF32) {
    return Add(name, std::move(shape), dtype, graph::TensorRole::kConstant);
  }
  // A node named `name` with one output named `name`:0; returns the output. Attributes default to the
  // op's empty attributes.
  graph::TensorId Op(const std::string& name, graph::OpKind kind,
                     std::vector<graph::TensorId> inputs, graph::OpAttrs attrs = {}) {
    return Ops(name, kind, std::move(inputs), 1, std::move(attrs))[0];
  }
  // A node with `n` outputs named name:0, name:1, ...
  std::vector<graph::TensorId> Ops(const std::string& name, graph::OpKind kind,
                                   std::vector<graph::TensorId> inputs, int n,
                                   graph::OpAttrs attrs = {}) {
    std::vector<graph::TensorId> outs;
    for (int i = 0; i < n; ++i) {
      outs.push_back(Add(name + ":" + std::to_string(i), {}, graph::DType::kF32,
                         graph::TensorRole::kActivation));
    }
    if (std::holds_alternative<std::monostate>(attrs)) attrs = graph::DefaultAttrs(kind);
    auto id = g.AddNode({.name = name, .kind = kind, .inputs = std::move(inputs),
                         .outputs = outs, .attrs = std::move(attrs)});
    EXPECT_TRUE(id.ok()) << id.status();
    if (id.ok()) nodes_[name] = *id;
    return outs;
  }
  // The id of the node named `name`; fails the test (and returns 0) when there is none.
  graph::NodeId Node(const std::string& name) const {
    auto it = nodes_.find(name);
    if (it != nodes_.end()) return it->second;
    ADD_FAILURE() << "no node named '" << name << "'";
    return 0;
  }
  // Runs shape inference; fails the test on error.
  void Infer() {
    const absl::Status s = graph::InferShapes(g);
    ASSERT_TRUE(s.ok()) << s;
  }

 private:
  graph::TensorId Add(const std::string& name, graph::Shape shape, graph::DType dtype,
                      graph::TensorRole role) {
    auto id = g.AddTensor({.name = name, .shape = std::move(shape), .dtype = dtype, .role = role});
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : graph::kNoTensor;
  }
  std::map<std::string, graph::NodeId> nodes_;
};

}  // namespace tessera::testing
