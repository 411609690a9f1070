// Helpers shared by the graph tests: one-node shape inference, a sample graph
// for every op of the catalogue, and exact graph comparison.
//
//   EXPECT_SHAPE(InferShape(OpKind::kRelu, {In{{2, 3}}}), {2, 3});
//   EXPECT_TRUE(HasError(InferShape(...).status(), {"node 'node'", "[2,3]"}));
//   ExpectSameGraph(original, loaded);
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph::testing {

// One input of a node under test; inputs are named in0, in1, ...
struct In {
  Shape shape;
  DType dtype = DType::kF32;
};

// Builds inputs -> one node `name` -> `num_outputs` outputs, infers shapes and
// returns the output types (or the error of AddNode or inference).
inline absl::StatusOr<std::vector<TensorType>> InferNode(
    OpKind kind, const std::vector<std::optional<In>>& inputs, OpAttrs attrs = {},
    int num_outputs = 1, const std::string& name = "node") {
  if (std::holds_alternative<std::monostate>(attrs)) attrs = DefaultAttrs(kind);
  Graph g("test");
  Node node{.name = name, .kind = kind, .attrs = std::move(attrs)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      node.inputs.push_back(kNoTensor);
      continue;
    }
    auto id = g.AddTensor({.name = absl::StrCat("in", i),
                           .shape = inputs[i]->shape,
                           .dtype = inputs[i]->dtype,
                           .role = TensorRole::kInput});
    if (!id.ok()) return id.status();
    node.inputs.push_back(*id);
  }
  for (int i = 0; i < num_outputs; ++i) {
    auto id = g.AddTensor({.name = absl::StrCat("out", i)});
    if (!id.ok()) return id.status();
    node.outputs.push_back(*id);
  }
  const std::vector<TensorId> outputs = node.outputs;
  if (auto added = g.AddNode(std::move(node)); !added.ok()) return added.status();
  if (absl::Status s = InferShapes(g); !s.ok()) return s;
  std::vector<TensorType> types;
  for (TensorId t : outputs) types.push_back({g.tensor(t).shape, g.tensor(t).dtype});
  return types;
}

// The first output's shape.
inline absl::StatusOr<Shape> InferShape(OpKind kind, const std::vector<std::optional<In>>& inputs,
                                        OpAttrs attrs = {}, const std::string& name = "node") {
  auto types = InferNode(kind, inputs, std::move(attrs), 1, name);
  if (!types.ok()) return types.status();
  return types->at(0).shape;
}

#define EXPECT_SHAPE(expr, ...)                                       \
  do {                                                                \
    const absl::StatusOr<::tessera::graph::Shape> ts_shape_ = (expr); \
    ASSERT_TRUE(ts_shape_.ok()) << ts_shape_.status();                \
    EXPECT_EQ(*ts_shape_, (::tessera::graph::Shape __VA_ARGS__));     \
  } while (0)

// Success when `status` is an error whose message contains every part.
inline ::testing::AssertionResult HasError(const absl::Status& status,
                                           const std::vector<std::string>& parts) {
  if (status.ok()) return ::testing::AssertionFailure() << "expected an error, got OK";
  for (const std::string& part : parts) {
    if (status.message().find(part) == absl::string_view::npos) {
      return ::testing::AssertionFailure()
             << "error \"" << status.message() << "\" does not contain \"" << part << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

// Doubles equal bit for bit (any NaN equals any NaN).
inline bool SameDouble(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

inline void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.num_tensors(), b.num_tensors());
  for (TensorId i = 0; i < a.num_tensors(); ++i) {
    const Tensor& x = a.tensor(i);
    const Tensor& y = b.tensor(i);
    SCOPED_TRACE(absl::StrCat("tensor ", i, " '", x.name, "'"));
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.role, y.role);
    EXPECT_EQ(x.batch_axis, y.batch_axis);
    EXPECT_EQ(x.producer, y.producer);
    ASSERT_EQ(x.data.size(), y.data.size());
    size_t k = 0;  // the first value that differs (one expectation, not millions)
    while (k < x.data.size() && SameDouble(x.data[k], y.data[k])) ++k;
    if (k < x.data.size())
      ADD_FAILURE() << "data[" << k << "]: " << x.data[k] << " vs " << y.data[k];
  }
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (NodeId i = 0; i < a.num_nodes(); ++i) {
    const Node& x = a.node(i);
    const Node& y = b.node(i);
    SCOPED_TRACE(absl::StrCat("node ", i, " '", x.name, "'"));
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_TRUE(x.attrs == y.attrs) << "attributes differ";
  }
  EXPECT_EQ(a.outputs(), b.outputs());
}

}  // namespace tessera::graph::testing
