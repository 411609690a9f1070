// Small ONNX seeds for fuzz_onnx_import (make_corpus.cc writes them): one model per group
// of ops, a few hundred bytes each, so that mutations reach the folding rules and the
// translations instead of breaking one big protobuf. Patterns follow tests/onnx/.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_test_util.h"  // tests/onnx: the OnnxModel builder
#include "tessera/base/check.h"

namespace tessera::fuzz {

using graph::testing::OnnxModel;

namespace {

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, with a symbolic batch.
OnnxModel ShapeChain() {
  OnnxModel m(13);
  m.Input("x", {"batch", 3, 4});
  m.Node("Shape", {"x"}, {"s"});
  m.ConstI64("zero", {}, {0});
  m.Node("Gather", {"s", "zero"}, {"b"});
  m.ConstI64("ax0", {1}, {0});
  m.Node("Unsqueeze", {"b", "ax0"}, {"b1"});
  m.ConstI64("rest", {1}, {12});
  OnnxModel::AttrInt(m.Node("Concat", {"b1", "rest"}, {"target"}), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"y"}, "/view");
  m.Output("y");
  return m;
}

// Range, ConstantOfShape, Cast, Sqrt/Div on shapes, Equal/Where/Less/Not, Greater, Mod.
OnnxModel FoldMath() {
  OnnxModel m(13);
  m.Input("scores", {2, 3, 3});
  m.Node("Shape", {"scores"}, {"s"});
  m.ConstI64("last", {}, {-1});
  m.Node("Gather", {"s", "last"}, {"t"});
  m.ConstI64("zero", {}, {0});
  m.ConstI64("one", {}, {1});
  m.Node("Range", {"zero", "t", "one"}, {"idx"});
  m.ConstI64("ax0", {1}, {0});
  m.ConstI64("ax1", {1}, {1});
  m.Node("Unsqueeze", {"idx", "ax0"}, {"row"});
  m.Node("Unsqueeze", {"idx", "ax1"}, {"col"});
  m.Node("Greater", {"row", "col"}, {"mask"});
  m.ConstF32("ninf", {}, {-std::numeric_limits<float>::infinity()});
  m.Node("Where", {"mask", "ninf", "scores"}, {"masked"});
  OnnxModel::AttrInt(m.Node("Cast", {"t"}, {"tf"}), "to", onnx::TensorProto::FLOAT);
  m.Node("Sqrt", {"tf"}, {"root"});
  m.ConstF32("onef", {}, {1.0f});
  m.Node("Div", {"onef", "root"}, {"scale"});
  m.Node("Mul", {"masked", "scale"}, {"scaled"});
  auto& cos = m.Node("ConstantOfShape", {"s"}, {"half"});
  OnnxModel::AttrTensor(cos, "value", OnnxModel::F32Tensor({1}, {0.5f}));
  m.Node("Add", {"scaled", "half"}, {"y"});
  m.ConstI64("two", {}, {2});
  m.Node("Mod", {"t", "two"}, {"odd"});
  m.Node("Equal", {"odd", "one"}, {"is_odd"});
  m.Node("Not", {"is_odd"}, {"even"});
  m.Output("y");
  return m;
}

// Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, Flatten, Gemm.
OnnxModel ConvNet() {
  OnnxModel m(13);
  m.Input("image", {"batch", 3, 8, 8});
  m.Initializer(OnnxModel::F32Tensor({4, 3, 3, 3}, std::vector<float>(108, 0.1f)), "conv.w");
  m.Initializer(OnnxModel::F32Tensor({4}, {0, 0, 0, 0}), "conv.b");
  auto& conv = m.Node("Conv", {"image", "conv.w", "conv.b"}, {"c"});
  OnnxModel::AttrInts(conv, "pads", {1, 1, 1, 1});
  OnnxModel::AttrInts(conv, "strides", {1, 1});
  for (const char* p : {"bn.scale", "bn.bias", "bn.mean", "bn.var"}) {
    m.Initializer(OnnxModel::F32Tensor({4}, {1, 1, 1, 1}), p);
  }
  m.Node("BatchNormalization", {"c", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"n"});
  m.Node("Relu", {"n"}, {"r"});
  auto& mp = m.Node("MaxPool", {"r"}, {"p"});
  OnnxModel::AttrInts(mp, "kernel_shape", {2, 2});
  OnnxModel::AttrInts(mp, "strides", {2, 2});
  auto& ap = m.Node("AveragePool", {"p"}, {"a"});
  OnnxModel::AttrInts(ap, "kernel_shape", {2, 2});
  OnnxModel::AttrInt(ap, "ceil_mode", 1);
  m.Node("GlobalAveragePool", {"a"}, {"g"});
  OnnxModel::AttrInt(m.Node("Flatten", {"g"}, {"f"}), "axis", 1);
  m.Input("fc.w", {10, 4});
  auto& gemm = m.Node("Gemm", {"f", "fc.w"}, {"logits"});
  OnnxModel::AttrInt(gemm, "transB", 1);
  m.Output("logits");
  return m;
}

// LSTM (bidirectional, with initial states) and MatMul.
OnnxModel Lstm() {
  OnnxModel m(13);
  m.Input("x", {5, "batch", 4});
  m.Input("W", {2, 12, 4});
  m.Input("R", {2, 12, 3});
  m.Input("B", {2, 24});
  auto& lstm = m.Node("LSTM", {"x", "W", "R", "B"}, {"Y", "Y_h", "Y_c"});
  OnnxModel::AttrInt(lstm, "hidden_size", 3);
  OnnxModel::AttrString(lstm, "direction", "bidirectional");
  m.Input("proj", {3, 2});
  m.Node("MatMul", {"Y", "proj"}, {"y"});
  m.Output("y");
  m.Output("Y_h");
  return m;
}

// Split, Unsqueeze/Squeeze, Transpose, Flatten, Pad, Reduce*, Concat, Slice, Expand.
OnnxModel Layout() {
  OnnxModel m(13);
  m.Input("x", {2, 6, 4});
  m.ConstI64("sizes", {2}, {2, 4});
  OnnxModel::AttrInt(m.Node("Split", {"x", "sizes"}, {"s0", "s1"}), "axis", 1);
  m.ConstI64("ax", {1}, {1});
  m.Node("Unsqueeze", {"s0", "ax"}, {"u"});
  m.Node("Squeeze", {"u", "ax"}, {"q"});
  OnnxModel::AttrInts(m.Node("Transpose", {"q"}, {"t"}), "perm", {0, 2, 1});
  OnnxModel::AttrInt(m.Node("Flatten", {"t"}, {"f"}), "axis", 1);
  m.ConstI64("pads", {4}, {0, 1, 0, 2});
  m.ConstF32("pv", {}, {1.5f});
  m.Node("Pad", {"f", "pads", "pv"}, {"p"});
  auto& rm = m.Node("ReduceMean", {"s1"}, {"r"});
  OnnxModel::AttrInts(rm, "axes", {1});
  OnnxModel::AttrInt(rm, "keepdims", 0);
  m.ConstI64("rs_axes", {1}, {-1});
  m.Node("ReduceSum", {"r", "rs_axes"}, {"rs"});
  OnnxModel::AttrInt(m.Node("Concat", {"p", "rs"}, {"c"}), "axis", 1);
  m.ConstI64("st", {1}, {1});
  m.ConstI64("en", {1}, {std::numeric_limits<int64_t>::max()});
  m.ConstI64("sa", {1}, {1});
  m.Node("Slice", {"c", "st", "en", "sa"}, {"sl"});
  m.ConstI64("target", {3}, {3, 2, 11});
  m.Node("Expand", {"sl", "target"}, {"e"});
  OnnxModel::AttrInts(m.Node("ReduceMax", {"e"}, {"mx"}), "axes", {0});
  m.Output("mx");
  return m;
}

// Embedding (Gather on a parameter table), LayerNormalization, Softmax, Gelu-style Erf,
// Clip, Dropout, LeakyRelu, Cast to f16, opset 17.
OnnxModel Transformerish() {
  OnnxModel m(17);
  m.Input("tokens", {"batch", "seq"}, onnx::TensorProto::INT64);
  m.Input("emb.weight", {16, 8});
  m.Node("Gather", {"emb.weight", "tokens"}, {"e"}, "/embed");
  m.Input("ln.g", {8});
  m.Input("ln.b", {8});
  OnnxModel::AttrFloat(m.Node("LayerNormalization", {"e", "ln.g", "ln.b"}, {"n"}), "epsilon",
                       1e-5f);
  m.Input("wq", {8, 8});
  m.Node("MatMul", {"n", "wq"}, {"q"});
  OnnxModel::AttrInts(m.Node("Transpose", {"q"}, {"qt"}), "perm", {0, 2, 1});
  m.Node("MatMul", {"q", "qt"}, {"scores"});
  OnnxModel::AttrInt(m.Node("Softmax", {"scores"}, {"attn"}), "axis", -1);
  m.Node("MatMul", {"attn", "n"}, {"ctx"});
  m.Node("Erf", {"ctx"}, {"erf"});
  m.ConstF32("lo", {}, {0.0f});
  m.ConstF32("hi", {}, {6.0f});
  m.Node("Clip", {"erf", "lo", "hi"}, {"clipped"});
  m.ConstF32("ratio", {}, {0.1f});
  m.Node("Dropout", {"clipped", "ratio"}, {"d"});
  OnnxModel::AttrFloat(m.Node("LeakyRelu", {"d"}, {"lr"}), "alpha", 0.2f);
  OnnxModel::AttrInt(m.Node("LogSoftmax", {"lr"}, {"ls"}), "axis", 2);
  OnnxModel::AttrInt(m.Node("Cast", {"ls"}, {"half"}), "to", onnx::TensorProto::FLOAT16);
  m.Output("half");
  return m;
}

// Opset 11: Softmax coerced to 2-D, Unsqueeze/Squeeze with axes attributes, Split attribute.
OnnxModel Opset11() {
  OnnxModel m(11);
  m.Input("x", {"batch", 7});
  auto& split = m.Node("Split", {"x"}, {"a", "b"});
  OnnxModel::AttrInts(split, "split", {3, 4});
  OnnxModel::AttrInt(split, "axis", 1);
  OnnxModel::AttrInts(m.Node("Unsqueeze", {"a"}, {"u"}), "axes", {1});
  OnnxModel::AttrInts(m.Node("Squeeze", {"u"}, {"s"}), "axes", {1});
  m.Node("Softmax", {"s"}, {"sm"});
  m.Node("Sigmoid", {"b"}, {"sg"});
  m.Node("Tanh", {"sg"}, {"th"});
  m.ConstF32("two", {}, {2.0f});
  m.Node("Pow", {"th", "two"}, {"pw"});
  m.Node("Sub", {"pw", "two"}, {"sb"});
  m.Node("Exp", {"sb"}, {"ex"});
  m.Node("Log", {"ex"}, {"lg"});
  m.Output("sm");
  m.Output("lg");
  return m;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> OnnxSeeds() {
  std::vector<std::pair<std::string, std::string>> seeds;
  graph::OnnxImportOptions options;
  options.symbolic_dims["seq"] = 8;
  for (auto& [name, model] : std::vector<std::pair<std::string, OnnxModel>>{
           {"small_shape_chain", ShapeChain()}, {"small_fold_math", FoldMath()},
           {"small_convnet", ConvNet()},        {"small_lstm", Lstm()},
           {"small_layout", Layout()},          {"small_transformer", Transformerish()},
           {"small_opset11", Opset11()}}) {
    auto g = model.Import(options);
    TS_CHECK(g.ok()) << name << ": " << g.status();
    seeds.emplace_back(name, model.Bytes());
  }
  return seeds;
}

}  // namespace tessera::fuzz
