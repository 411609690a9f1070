// A small valid graph for every op of the catalogue, used by the round-trip
// and hostile-input tests.
//
//   Graph g = SampleGraph(OpKind::kConv);        // x, w, b -> "op" -> y0
//   Graph h = SampleGraph(OpKind::kSplit, "\"é"); // every name ends in the suffix
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph::testing {

class SampleBuilder {
 public:
  SampleBuilder(OpKind kind, std::string suffix)
      : graph_(absl::StrCat("sample_", OpName(kind), suffix)), suffix_(std::move(suffix)) {}

  TensorId Add(const std::string& name, Shape shape, DType dtype = DType::kF32,
               TensorRole role = TensorRole::kInput, std::vector<double> data = {}) {
    auto id = graph_.AddTensor({.name = name + suffix_,
                                .shape = std::move(shape),
                                .dtype = dtype,
                                .role = role,
                                .data = std::move(data)});
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : kNoTensor;
  }
  TensorId Param(const std::string& name, Shape shape) {
    return Add(name, std::move(shape), DType::kF32, TensorRole::kParameter);
  }
  // The node "op" with outputs y0, y1, ..., all of them graph outputs.
  Graph Op(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs = {}, int num_outputs = 1) {
    if (std::holds_alternative<std::monostate>(attrs)) attrs = DefaultAttrs(kind);
    Node node{.name = "op" + suffix_,
              .kind = kind,
              .inputs = std::move(inputs),
              .attrs = std::move(attrs)};
    for (int i = 0; i < num_outputs; ++i)
      node.outputs.push_back(Add(absl::StrCat("y", i), {}, DType::kF32, TensorRole::kActivation));
    const std::vector<TensorId> outputs = node.outputs;
    auto added = graph_.AddNode(std::move(node));
    EXPECT_TRUE(added.ok()) << added.status();
    for (TensorId t : outputs) graph_.AddOutput(t);
    absl::Status inferred = InferShapes(graph_);
    EXPECT_TRUE(inferred.ok()) << inferred;
    return std::move(graph_);
  }

 private:
  Graph graph_;
  std::string suffix_;
};

inline Graph SampleDenseGraph(OpKind kind, SampleBuilder& b) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (kind) {
    case OpKind::kConv:
      return b.Op(kind, {b.Add("x", {2, 4, 9, 9}), b.Param("w", {8, 2, 3, 3}), b.Param("b", {8})},
                  ConvAttrs{.kernel_shape = {3, 3},
                            .strides = {2, 1},
                            .pads = {1, 0, 1, 2},
                            .dilations = {1, 2},
                            .groups = 2});
    case OpKind::kGemm:
      return b.Op(kind, {b.Add("a", {4, 6}), b.Param("w", {5, 6}), b.Param("c", {5})},
                  GemmAttrs{.trans_b = true, .alpha = 0.5, .beta = 2.25});
    case OpKind::kMatMul:
      return b.Op(kind, {b.Add("a", {3, 2, 4}), b.Param("w", {4, 5})});
    case OpKind::kEmbedding:
      return b.Op(kind, {b.Add("ids", {2, 7}, DType::kI64), b.Param("table", {50, 8})});
    case OpKind::kLstm:
      return b.Op(kind,
                  {b.Add("x", {5, 2, 3}), b.Param("w", {2, 16, 3}), b.Param("r", {2, 16, 4}),
                   b.Param("bias", {2, 32}), kNoTensor, b.Add("h0", {2, 2, 4}), kNoTensor},
                  LstmAttrs{.hidden_size = 4, .direction = LstmDirection::kBidirectional}, 3);
    case OpKind::kBatchNorm:
      return b.Op(kind,
                  {b.Add("x", {2, 3, 4, 4}), b.Param("scale", {3}), b.Param("shift", {3}),
                   b.Add("mean", {3}, DType::kF32, TensorRole::kConstant, {0.5, -0.25, 0}),
                   b.Add("var", {3}, DType::kF32, TensorRole::kConstant, {1, 2, 3})},
                  BatchNormAttrs{.epsilon = 1e-3, .momentum = 0.99});
    case OpKind::kLayerNorm:
      return b.Op(kind, {b.Add("x", {2, 5, 6}), b.Param("scale", {5, 6}), kNoTensor},
                  LayerNormAttrs{.axis = -2, .epsilon = 1e-6});
    case OpKind::kMaxPool:
      return b.Op(
          kind, {b.Add("x", {1, 2, 7, 9})},
          PoolAttrs{
              .kernel_shape = {3, 2}, .strides = {2, 2}, .pads = {1, 0, 1, 0}, .ceil_mode = true});
    case OpKind::kAveragePool:
      return b.Op(kind, {b.Add("x", {1, 2, 8, 8})},
                  PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}, .count_include_pad = true});
    case OpKind::kSlice:
      return b.Op(
          kind, {b.Add("x", {10, 8})},
          SliceAttrs{.starts = {-1, 1}, .ends = {kMin, kMax}, .axes = {0, 1}, .steps = {-2, 3}});
    default:
      return b.Op(kind, {b.Add("x", {2, 3})});
  }
}

// Every op of the catalogue; unary element-wise ops share the default case.
inline Graph SampleGraph(OpKind kind, const std::string& suffix = "") {
  SampleBuilder b(kind, suffix);
  switch (kind) {
    case OpKind::kGlobalAveragePool:
      return b.Op(kind, {b.Add("x", {2, 3, 5, 5})});
    case OpKind::kLeakyRelu:
      return b.Op(kind, {b.Add("x", {2, 3})}, ScalarAttrs{.alpha = 0.01});
    case OpKind::kClip:
      return b.Op(kind, {b.Add("x", {2, 3})}, ScalarAttrs{.alpha = -1.5, .beta = 6.0});
    case OpKind::kDropout:
      return b.Op(kind, {b.Add("x", {2, 3})}, ScalarAttrs{.alpha = 0.1});
    case OpKind::kCast:
      return b.Op(kind, {b.Add("x", {2, 3})}, CastAttrs{.to = DType::kI32});
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kPow:
      return b.Op(kind, {b.Add("a", {2, 3}), b.Add("b", {3})});
    case OpKind::kMul:
      return b.Op(kind, {b.Add("a", {2, 3}), b.Add("b", {3}, DType::kF32, TensorRole::kConstant,
                                                   {0.1, 1.0 / 3.0, 5e-324})});
    case OpKind::kDiv:
      return b.Op(kind, {b.Add("a", {2, 3}), b.Add("b", {3}, DType::kF32, TensorRole::kConstant,
                                                   {-0.0, std::numeric_limits<double>::infinity(),
                                                    std::numeric_limits<double>::quiet_NaN()})});
    case OpKind::kWhere:
      return b.Op(kind, {b.Add("cond", {2, 1}, DType::kBool), b.Add("a", {2, 3}), b.Add("b", {3})});
    case OpKind::kReduceMean:
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
      return b.Op(kind, {b.Add("x", {2, 3, 4})}, AxesAttrs{.axes = {1, -1}, .keepdims = false});
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax:
      return b.Op(kind, {b.Add("x", {2, 3, 4})}, AxisAttrs{.axis = 1});
    case OpKind::kReshape:
      return b.Op(kind, {b.Add("x", {2, 3, 4})}, ReshapeAttrs{.shape = {0, -1}});
    case OpKind::kTranspose:
      return b.Op(kind, {b.Add("x", {2, 3, 4})}, PermAttrs{.perm = {2, 0, 1}});
    case OpKind::kFlatten:
      return b.Op(kind, {b.Add("x", {2, 3, 4})}, AxisAttrs{.axis = 2});
    case OpKind::kConcat:
      return b.Op(kind, {b.Add("a", {2, 3}), b.Add("b", {2, 4}), b.Add("c", {2, 1})},
                  AxisAttrs{.axis = 1});
    case OpKind::kSplit:
      return b.Op(kind, {b.Add("x", {6, 4})}, SplitAttrs{.axis = 0, .sizes = {1, 2, 3}}, 3);
    case OpKind::kSqueeze:
      return b.Op(kind, {b.Add("x", {1, 3, 1})}, AxesAttrs{.axes = {0}, .keepdims = true});
    case OpKind::kUnsqueeze:
      return b.Op(kind, {b.Add("x", {3, 4})}, AxesAttrs{.axes = {0, -1}});
    case OpKind::kGather:
      return b.Op(kind,
                  {b.Param("table", {10, 4}),
                   b.Add("idx", {3}, DType::kI64, TensorRole::kConstant, {0, 3, 1})},
                  AxisAttrs{.axis = 1});
    case OpKind::kExpand:
      return b.Op(kind, {b.Add("x", {3, 1})}, ExpandAttrs{.shape = {2, 3, 5}});
    case OpKind::kPad:
      return b.Op(kind, {b.Add("x", {2, 3})},
                  PadAttrs{.pads = {1, 0, 2, -1}, .mode = PadMode::kReflect, .value = 0.5});
    case OpKind::kSoftmaxCrossEntropy:
      return b.Op(kind, {b.Add("logits", {4, 10}), b.Add("labels", {4}, DType::kI64)},
                  LossAttrs{.reduction = Reduction::kSum, .ignore_index = 3});
    case OpKind::kCtcLoss:
      return b.Op(
          kind,
          {b.Add("log_probs", {12, 2, 6}), b.Add("targets", {2, 5}, DType::kI32),
           b.Add("input_lengths", {2}, DType::kI32), b.Add("target_lengths", {2}, DType::kI32)},
          LossAttrs{.reduction = Reduction::kNone, .blank = 5});
    default:
      return SampleDenseGraph(kind, b);
  }
}

// A small CNN classifier with eight nodes (nodes[3] is "conv1"), a constant
// with data, and two outputs; shapes inferred.
inline Graph SmallNet() {
  Graph g("small_net");
  auto add = [&g](const std::string& name, Shape shape, TensorRole role = TensorRole::kActivation,
                  DType dtype = DType::kF32, std::vector<double> data = {}) {
    auto id = g.AddTensor({.name = name,
                           .shape = std::move(shape),
                           .dtype = dtype,
                           .role = role,
                           .data = std::move(data)});
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : kNoTensor;
  };
  auto node = [&g](const std::string& name, OpKind kind, std::vector<TensorId> inputs,
                   std::vector<TensorId> outputs, OpAttrs attrs = {}) {
    if (std::holds_alternative<std::monostate>(attrs)) attrs = DefaultAttrs(kind);
    auto id = g.AddNode({.name = name,
                         .kind = kind,
                         .inputs = std::move(inputs),
                         .outputs = std::move(outputs),
                         .attrs = std::move(attrs)});
    EXPECT_TRUE(id.ok()) << id.status();
  };
  const TensorId x = add("x", {1, 3, 8, 8}, TensorRole::kInput);
  const TensorId labels = add("labels", {1}, TensorRole::kInput, DType::kI64);
  const TensorId w0 = add("w0", {4, 3, 3, 3}, TensorRole::kParameter);
  const TensorId w1 = add("w1", {8, 4, 1, 1}, TensorRole::kParameter);
  const TensorId b1 = add("b1", {8}, TensorRole::kParameter);
  const TensorId wf = add("wf", {10, 72}, TensorRole::kParameter);
  const TensorId bf = add("bf", {10}, TensorRole::kParameter);
  const TensorId scale = add("scale", {1}, TensorRole::kConstant, DType::kF32, {0.5});
  const TensorId c0 = add("c0", {}), r0 = add("r0", {}), p0 = add("p0", {}), c1 = add("c1", {});
  const TensorId f = add("f", {}), logits = add("logits", {}), loss = add("loss", {});
  const TensorId scaled = add("scaled", {});
  node("conv0", OpKind::kConv, {x, w0}, {c0}, ConvAttrs{.kernel_shape = {3, 3}});
  node("relu0", OpKind::kRelu, {c0}, {r0});
  node("pool0", OpKind::kMaxPool, {r0}, {p0}, PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}});
  node("conv1", OpKind::kConv, {p0, w1, b1}, {c1}, ConvAttrs{.strides = {1, 1}});
  node("flat", OpKind::kFlatten, {c1}, {f}, AxisAttrs{.axis = 1});
  node("fc", OpKind::kGemm, {f, wf, bf}, {logits}, GemmAttrs{.trans_b = true});
  node("loss", OpKind::kSoftmaxCrossEntropy, {logits, labels}, {loss});
  node("mul", OpKind::kMul, {logits, scale}, {scaled});
  g.AddOutput(loss);
  g.AddOutput(scaled);
  absl::Status inferred = InferShapes(g);
  EXPECT_TRUE(inferred.ok()) << inferred;
  return g;
}

}  // namespace tessera::graph::testing
