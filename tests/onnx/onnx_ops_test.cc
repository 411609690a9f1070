// Each ONNX op's mapping to IR nodes and typed attributes, on hand-built models.
#include <limits>

#include "gtest/gtest.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/parameters.h"
#include "onnx_test_util.h"

namespace tessera::graph {
namespace {

using testing::Named;
using testing::OnlyNode;
using testing::OnnxModel;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Imports `m` and returns its only node of `kind` (the test fails when absent).
const Node& Single(const absl::StatusOr<Graph>& g, OpKind kind) {
  static const Node none;
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return none;
  const Node* n = OnlyNode(*g, kind);
  EXPECT_NE(n, nullptr) << OpName(kind);
  return n ? *n : none;
}

TEST(OnnxOps, ConvGroupedDilatedStridedAndAutoPad) {
  OnnxModel m(11);
  m.Input("x", {2, 8, 9, 9});
  m.Input("w", {16, 2, 3, 3});
  m.Input("b", {16});
  auto& conv = m.Node("Conv", {"x", "w", "b"}, {"y"});
  OnnxModel::AttrInt(conv, "group", 4);
  OnnxModel::AttrInts(conv, "strides", {2, 2});
  OnnxModel::AttrInts(conv, "dilations", {2, 2});
  OnnxModel::AttrString(conv, "auto_pad", "SAME_UPPER");
  m.Output("y");
  auto g = m.Import();
  const Node& n = Single(g, OpKind::kConv);
  const auto& a = std::get<ConvAttrs>(n.attrs);
  EXPECT_EQ(a.groups, 4);
  EXPECT_EQ(a.kernel_shape, (std::vector<int64_t>{3, 3}));
  // SAME: out = ceil(9/2) = 5; total pad = (5-1)*2 + 5 - 9 = 4, split 2/2.
  EXPECT_EQ(a.pads, (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(Named(*g, "y").shape, (Shape{2, 16, 5, 5}));
  EXPECT_EQ(Named(*g, "w").role, TensorRole::kParameter);
  EXPECT_EQ(Named(*g, "b").role, TensorRole::kParameter);
  EXPECT_EQ(Named(*g, "x").role, TensorRole::kInput);
}

TEST(OnnxOps, AutoPadSameLowerPutsTheOddPadFirstAndValidHasNone) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    OnnxModel m(13);
    m.Input("x", {1, 4, 6});
    m.Input("w", {4, 1, 2});  // depthwise 1-D, kernel 2
    auto& conv = m.Node("Conv", {"x", "w"}, {"y"});
    OnnxModel::AttrInt(conv, "group", 4);
    OnnxModel::AttrString(conv, "auto_pad", mode);
    m.Output("y");
    auto g = m.Import();
    const auto& pads = std::get<ConvAttrs>(Single(g, OpKind::kConv).attrs).pads;
    const std::string which = mode;
    if (which == "SAME_UPPER") EXPECT_EQ(pads, (std::vector<int64_t>{0, 1}));
    if (which == "SAME_LOWER") EXPECT_EQ(pads, (std::vector<int64_t>{1, 0}));
    if (which == "VALID") EXPECT_EQ(pads, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(Named(*g, "y").shape, which == "VALID" ? (Shape{1, 4, 5}) : (Shape{1, 4, 6}));
  }
}

TEST(OnnxOps, GemmKeepsTransposesAndScales) {
  OnnxModel m(13);
  m.Input("x", {4, 32});   // with x, the static batch 4 is the value the data inputs share
  m.Input("xt", {32, 4});
  m.Input("w", {8, 32});
  m.Input("c", {8});
  m.Node("Relu", {"x"}, {"r"});
  auto& gemm = m.Node("Gemm", {"xt", "w", "c"}, {"y"});
  OnnxModel::AttrInt(gemm, "transA", 1);
  OnnxModel::AttrInt(gemm, "transB", 1);
  OnnxModel::AttrFloat(gemm, "alpha", 0.5f);
  OnnxModel::AttrFloat(gemm, "beta", 2.0f);
  m.Output("y");
  m.Output("r");
  auto g = m.Import({.batch = 6});
  const auto& a = std::get<GemmAttrs>(Single(g, OpKind::kGemm).attrs);
  EXPECT_TRUE(a.trans_a);
  EXPECT_TRUE(a.trans_b);
  EXPECT_DOUBLE_EQ(a.alpha, 0.5);
  EXPECT_DOUBLE_EQ(a.beta, 2.0);
  // The static batch 4 sits on axis 1 of xt; batch 6 replaces it.
  EXPECT_EQ(Named(*g, "xt").shape, (Shape{32, 6}));
  EXPECT_EQ(Named(*g, "y").shape, (Shape{6, 8}));
}

TEST(OnnxOps, MatMulBroadcastsBatchDimensions) {
  OnnxModel m(13);
  m.Input("q", {"batch", 4, 6, 8});
  m.Input("w", {1, 4, 8, 5});
  m.Node("MatMul", {"q", "w"}, {"y"});
  m.Output("y");
  auto g = m.Import({.batch = 3});
  Single(g, OpKind::kMatMul);
  EXPECT_EQ(Named(*g, "y").shape, (Shape{3, 4, 6, 5}));
  EXPECT_EQ(Named(*g, "w").role, TensorRole::kParameter);
}

TEST(OnnxOps, LstmBidirectionalBatchFirstWithAllOutputs) {
  OnnxModel m(14);
  m.Input("x", {"batch", 7, 16});
  m.Input("W", {2, 128, 16});
  m.Input("R", {2, 128, 32});
  m.Input("B", {2, 256});
  auto& lstm = m.Node("LSTM", {"x", "W", "R", "B"}, {"y", "", "c"});
  OnnxModel::AttrInt(lstm, "hidden_size", 32);
  OnnxModel::AttrString(lstm, "direction", "bidirectional");
  OnnxModel::AttrInt(lstm, "layout", 1);
  m.Output("y");
  m.Output("c");
  auto g = m.Import({.batch = 3});
  const Node& n = Single(g, OpKind::kLstm);
  const auto& a = std::get<LstmAttrs>(n.attrs);
  EXPECT_EQ(a.direction, LstmDirection::kBidirectional);
  EXPECT_EQ(a.layout, 1);
  EXPECT_EQ(a.hidden_size, 32);
  ASSERT_EQ(n.outputs.size(), 3u);
  EXPECT_EQ(g->tensor(n.outputs[1]).shape, (Shape{3, 2, 32}));  // unnamed Y_h gets a name
  EXPECT_EQ(Named(*g, "y").shape, (Shape{3, 7, 2, 32}));
  EXPECT_EQ(Named(*g, "c").shape, (Shape{3, 2, 32}));
  EXPECT_EQ(CountParameters(*g), 2 * 128 * 16 + 2 * 128 * 32 + 2 * 256);
}

TEST(OnnxOps, LstmSequenceFirstWithStatesAndNoBias) {
  OnnxModel m(13);
  m.Input("x", {10, "batch", 4});
  m.Input("W", {1, 32, 4});
  m.Input("R", {1, 32, 8});
  m.Input("h0", {1, "batch", 8});
  m.Input("c0", {1, "batch", 8});
  OnnxModel::AttrInt(m.Node("LSTM", {"x", "W", "R", "", "", "h0", "c0"}, {"y", "h", "c"}),
                     "hidden_size", 8);
  m.Output("y");
  auto g = m.Import({.batch = 5});
  const Node& n = Single(g, OpKind::kLstm);
  ASSERT_EQ(n.inputs.size(), 7u);
  EXPECT_EQ(n.inputs[3], kNoTensor);
  EXPECT_EQ(Named(*g, "y").shape, (Shape{10, 1, 5, 8}));
  EXPECT_EQ(Named(*g, "h0").role, TensorRole::kInput);
}

// training_mode 1 (a training export) imports as the same op: Tessera's BatchNormalization
// normalizes with the batch statistics while training; any other value is an error.
TEST(OnnxOps, BatchNormRunningStatsAreConstantsAndTrainingModeImports) {
  for (int64_t training : {0, 1, 2}) {
    OnnxModel m(15);
    m.Input("x", {2, 3, 4, 4});
    for (const char* p : {"scale", "bias", "mean", "var"}) m.Input(p, {3});
    auto& bn = m.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "/bn");
    OnnxModel::AttrFloat(bn, "epsilon", 1e-3f);
    OnnxModel::AttrInt(bn, "training_mode", training);
    m.Output("y");
    auto g = m.Import();
    if (training == 2) {
      ASSERT_FALSE(g.ok());
      EXPECT_NE(g.status().message().find("node '/bn'"), std::string::npos) << g.status();
      EXPECT_NE(g.status().message().find("training_mode"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_NEAR(std::get<BatchNormAttrs>(Single(g, OpKind::kBatchNorm).attrs).epsilon, 1e-3, 1e-9);
    EXPECT_EQ(Named(*g, "scale").role, TensorRole::kParameter);
    EXPECT_EQ(Named(*g, "bias").role, TensorRole::kParameter);
    EXPECT_EQ(Named(*g, "mean").role, TensorRole::kConstant);
    EXPECT_EQ(Named(*g, "var").role, TensorRole::kConstant);
    EXPECT_EQ(CountParameters(*g), 6);
  }
}

TEST(OnnxOps, PoolsCarryCeilModeAndCountIncludePad) {
  OnnxModel m(13);
  m.Input("x", {1, 2, 7, 7});
  auto& mp = m.Node("MaxPool", {"x"}, {"a"});
  OnnxModel::AttrInts(mp, "kernel_shape", {2, 2});
  OnnxModel::AttrInts(mp, "strides", {2, 2});
  OnnxModel::AttrInt(mp, "ceil_mode", 1);
  auto& ap = m.Node("AveragePool", {"a"}, {"b"});
  OnnxModel::AttrInts(ap, "kernel_shape", {3, 3});
  OnnxModel::AttrInts(ap, "pads", {1, 1, 1, 1});
  OnnxModel::AttrInt(ap, "count_include_pad", 1);
  m.Node("GlobalAveragePool", {"b"}, {"c"});
  m.Output("c");
  auto g = m.Import();
  EXPECT_TRUE(std::get<PoolAttrs>(Single(g, OpKind::kMaxPool).attrs).ceil_mode);
  EXPECT_TRUE(std::get<PoolAttrs>(Single(g, OpKind::kAveragePool).attrs).count_include_pad);
  Single(g, OpKind::kGlobalAveragePool);
  EXPECT_EQ(Named(*g, "a").shape, (Shape{1, 2, 4, 4}));
  EXPECT_EQ(Named(*g, "b").shape, (Shape{1, 2, 4, 4}));
  EXPECT_EQ(Named(*g, "c").shape, (Shape{1, 2, 1, 1}));
}

TEST(OnnxOps, SoftmaxBeforeOpset13IsCoercedTo2D) {
  OnnxModel m(11);
  m.Input("x", {2, 3, 4});
  OnnxModel::AttrInt(m.Node("Softmax", {"x"}, {"y"}, "/sm"), "axis", 1);
  m.Node("LogSoftmax", {"x"}, {"z"});  // default axis 1 as well
  OnnxModel::AttrInt(m.Node("Softmax", {"x"}, {"w"}), "axis", -1);
  m.Output("y");
  m.Output("z");
  m.Output("w");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  // axis 1 of a rank-3 input: Flatten(1) -> Softmax(axis 1) on [2, 12] -> Reshape back.
  int flattens = 0, reshapes = 0, softmaxes = 0;
  for (const Node& n : g->nodes()) {
    flattens += n.kind == OpKind::kFlatten;
    reshapes += n.kind == OpKind::kReshape;
    softmaxes += n.kind == OpKind::kSoftmax || n.kind == OpKind::kLogSoftmax;
    if (n.kind == OpKind::kSoftmax && n.name == "/sm/softmax_2d") {
      EXPECT_EQ(g->tensor(n.inputs[0]).shape, (Shape{2, 12}));
      EXPECT_EQ(std::get<AxisAttrs>(n.attrs).axis, 1);
    }
  }
  EXPECT_EQ(flattens, 2);
  EXPECT_EQ(reshapes, 2);
  EXPECT_EQ(softmaxes, 3);
  EXPECT_EQ(Named(*g, "y").shape, (Shape{2, 3, 4}));
  EXPECT_EQ(Named(*g, "z").shape, (Shape{2, 3, 4}));
}

TEST(OnnxOps, SoftmaxFromOpset13IsPerAxis) {
  OnnxModel m(13);
  m.Input("x", {2, 3, 4});
  OnnxModel::AttrInt(m.Node("Softmax", {"x"}, {"y"}), "axis", 1);
  m.Node("LogSoftmax", {"y"}, {"z"});
  m.Output("z");
  auto g = m.Import();
  EXPECT_EQ(std::get<AxisAttrs>(Single(g, OpKind::kSoftmax).attrs).axis, 1);
  EXPECT_EQ(std::get<AxisAttrs>(Single(g, OpKind::kLogSoftmax).attrs).axis, 2);
}

TEST(OnnxOps, LayerNormalizationAndElementwiseOps) {
  OnnxModel m(17);
  m.Input("x", {2, 5, 8});
  m.Input("g", {8});
  m.Input("b", {8});
  auto& ln = m.Node("LayerNormalization", {"x", "g", "b"}, {"n"});
  OnnxModel::AttrFloat(ln, "epsilon", 1e-6f);
  std::string prev = "n";
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log", "Neg",
                         "Reciprocal", "Abs"}) {
    m.Node(op, {prev}, {std::string("o_") + op});
    prev = std::string("o_") + op;
  }
  OnnxModel::AttrFloat(m.Node("LeakyRelu", {prev}, {"lr"}), "alpha", 0.2f);
  m.ConstF32("zero", {}, {0.0f});
  m.ConstF32("six", {}, {6.0f});
  m.Node("Clip", {"lr", "zero", "six"}, {"relu6"});
  m.Node("Clip", {"relu6", "zero"}, {"lower_only"});
  m.ConstF32("ratio", {}, {0.25f});
  m.Node("Dropout", {"lower_only", "ratio"}, {"d"});
  m.Node("Identity", {"d"}, {"i"});
  OnnxModel::AttrInt(m.Node("Cast", {"i"}, {"half"}), "to", onnx::TensorProto::FLOAT16);
  m.Output("i");
  m.Output("half");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_NEAR(std::get<LayerNormAttrs>(Single(g, OpKind::kLayerNorm).attrs).epsilon, 1e-6, 1e-12);
  for (OpKind k : {OpKind::kRelu, OpKind::kSigmoid, OpKind::kTanh, OpKind::kErf, OpKind::kSqrt,
                   OpKind::kExp, OpKind::kLog, OpKind::kNeg, OpKind::kReciprocal, OpKind::kAbs,
                   OpKind::kIdentity}) {
    EXPECT_NE(OnlyNode(*g, k), nullptr) << OpName(k);
  }
  EXPECT_NEAR(std::get<ScalarAttrs>(Single(g, OpKind::kLeakyRelu).attrs).alpha, 0.2, 1e-6);
  std::vector<ScalarAttrs> clips;
  for (const Node& n : g->nodes()) {
    if (n.kind == OpKind::kClip) clips.push_back(std::get<ScalarAttrs>(n.attrs));
  }
  ASSERT_EQ(clips.size(), 2u);
  EXPECT_EQ(clips[0], (ScalarAttrs{.alpha = 0, .beta = 6}));
  EXPECT_EQ(clips[1], (ScalarAttrs{.alpha = 0, .beta = kInf}));
  EXPECT_DOUBLE_EQ(std::get<ScalarAttrs>(Single(g, OpKind::kDropout).attrs).alpha, 0.25);
  EXPECT_EQ(Named(*g, "i").shape, (Shape{2, 5, 8}));
  EXPECT_EQ(std::get<CastAttrs>(Single(g, OpKind::kCast).attrs).to, DType::kF16);
  EXPECT_EQ(Named(*g, "half").dtype, DType::kF16);
  EXPECT_EQ(CountParameters(*g), 16);
}

TEST(OnnxOps, BinaryOpsWithConstantScalarsAndWhere) {
  OnnxModel m(13);
  m.Input("x", {3, 4});
  m.ConstF32("two", {}, {2.0f});
  m.ConstI64("three", {}, {3});
  m.Node("Add", {"x", "two"}, {"a"});
  m.Node("Sub", {"two", "a"}, {"s"});
  m.Node("Mul", {"s", "two"}, {"mu"});
  m.Node("Div", {"mu", "two"}, {"dv"});
  m.Node("Pow", {"dv", "three"}, {"p"});  // an i64 exponent is converted to f32
  m.Output("p");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& pow = Single(g, OpKind::kPow);
  const Tensor& exponent = g->tensor(pow.inputs[1]);
  EXPECT_EQ(exponent.dtype, DType::kF32);
  EXPECT_EQ(exponent.role, TensorRole::kConstant);
  EXPECT_EQ(exponent.data, std::vector<double>{3});
  EXPECT_EQ(Named(*g, "two").data, std::vector<double>{2});
  EXPECT_EQ(Named(*g, "two").role, TensorRole::kConstant);
  EXPECT_EQ(CountParameters(*g), 0);
  EXPECT_EQ(Named(*g, "x").role, TensorRole::kInput);
}

TEST(OnnxOps, LayoutOpsTakeTheirParametersFromConstantInputs) {
  OnnxModel m(13);
  m.Input("x", {2, 6, 4});
  m.ConstI64("sizes", {2}, {2, 4});
  OnnxModel::AttrInt(m.Node("Split", {"x", "sizes"}, {"s0", "s1"}), "axis", 1);
  m.ConstI64("ax", {1}, {1});
  m.Node("Unsqueeze", {"s0", "ax"}, {"u"});        // [2,1,2,4]
  m.Node("Squeeze", {"u", "ax"}, {"q"});           // [2,2,4]
  OnnxModel::AttrInts(m.Node("Transpose", {"q"}, {"t"}), "perm", {0, 2, 1});  // [2,4,2]
  OnnxModel::AttrInt(m.Node("Flatten", {"t"}, {"f"}), "axis", 1);            // [2,8]
  m.ConstI64("pads", {4}, {0, 1, 0, 2});
  m.ConstF32("pv", {}, {1.5f});
  m.Node("Pad", {"f", "pads", "pv"}, {"p"});       // [2,11]
  auto& rm = m.Node("ReduceMean", {"s1"}, {"r"});  // [2,4]: axes attribute until opset 18
  OnnxModel::AttrInts(rm, "axes", {1});
  OnnxModel::AttrInt(rm, "keepdims", 0);
  m.ConstI64("rs_axes", {1}, {-1});
  m.Node("ReduceSum", {"r", "rs_axes"}, {"rs"});   // [2,1]: axes input from opset 13
  OnnxModel::AttrInt(m.Node("Concat", {"p", "rs"}, {"c"}), "axis", 1);  // [2,12]
  OnnxModel::AttrInts(m.Node("ReduceMax", {"c"}, {"mx"}), "axes", {0});
  m.Output("mx");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(std::get<SplitAttrs>(Single(g, OpKind::kSplit).attrs).sizes,
            (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(std::get<AxesAttrs>(Single(g, OpKind::kSqueeze).attrs).axes, std::vector<int64_t>{1});
  const auto& pad = std::get<PadAttrs>(Single(g, OpKind::kPad).attrs);
  EXPECT_EQ(pad.pads, (std::vector<int64_t>{0, 1, 0, 2}));
  EXPECT_DOUBLE_EQ(pad.value, 1.5);
  EXPECT_FALSE(std::get<AxesAttrs>(Single(g, OpKind::kReduceMean).attrs).keepdims);
  EXPECT_EQ(std::get<AxesAttrs>(Single(g, OpKind::kReduceSum).attrs).axes,
            std::vector<int64_t>{-1});
  EXPECT_EQ(Named(*g, "p").shape, (Shape{2, 11}));
  EXPECT_EQ(Named(*g, "c").shape, (Shape{2, 12}));
  EXPECT_EQ(Named(*g, "mx").shape, (Shape{1, 12}));
}

TEST(OnnxOps, SplitAttributeFormAndEqualSplit) {
  OnnxModel m(11);
  m.Input("x", {2, 7});
  auto& split = m.Node("Split", {"x"}, {"a", "b"}, "/attr");
  OnnxModel::AttrInts(split, "split", {3, 4});
  OnnxModel::AttrInt(split, "axis", 1);
  OnnxModel::AttrInt(m.Node("Split", {"x"}, {"c", "d", "e"}, "/equal"), "axis", 0);
  m.Output("a");
  m.Output("c");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "b").shape, (Shape{2, 4}));
  EXPECT_EQ(Named(*g, "e").shape, (Shape{0, 7}));  // ceil(2/3) = 1 per part: 1, 1, 0
}

TEST(OnnxOps, GatherOnDataStaysGatherAndOnAParameterTableBecomesEmbedding) {
  OnnxModel m(13);
  m.Input("tokens", {"batch", 5}, onnx::TensorProto::INT64);
  m.Input("table", {100, 16});
  m.Node("Gather", {"table", "tokens"}, {"e"}, "/emb");  // [B,5,16]
  m.ConstI64("first", {}, {0});
  OnnxModel::AttrInt(m.Node("Gather", {"e", "first"}, {"cls"}, "/cls"), "axis", 1);  // [B,16]
  m.Node("Identity", {"table"}, {"table_alias"});
  m.Node("Gather", {"table_alias", "tokens"}, {"e2"}, "/emb2");
  m.Output("cls");
  m.Output("e2");
  auto g = m.Import({.batch = 4});
  ASSERT_TRUE(g.ok()) << g.status();
  int embeddings = 0;
  for (const Node& n : g->nodes()) {
    if (n.kind == OpKind::kEmbedding) {
      ++embeddings;
      EXPECT_EQ(g->tensor(n.inputs[0]).name, "tokens");
    }
  }
  EXPECT_EQ(embeddings, 2);
  const Node& gather = Single(g, OpKind::kGather);
  EXPECT_EQ(gather.name, "/cls");
  EXPECT_EQ(std::get<AxisAttrs>(gather.attrs).axis, 1);
  EXPECT_EQ(Named(*g, "cls").shape, (Shape{4, 16}));
  EXPECT_EQ(CountParameters(*g), 1600);  // the Identity alias is the same table
}

TEST(OnnxOps, InitializersWithValuesArePlacedByTheSameRule) {
  OnnxModel m(13);
  m.Input("x", {"batch", 4});
  m.Initializer(OnnxModel::F32Tensor({4, 3}, std::vector<float>(12, 0.1f)), "w");
  m.Initializer(OnnxModel::F32Tensor({3}, {1, 2, 3}), "b");
  m.Initializer(OnnxModel::I64Tensor({2}, {-1, 3}), "shape");
  m.Node("MatMul", {"x", "w"}, {"h"});
  m.Node("Add", {"h", "b"}, {"y"});
  m.Node("Reshape", {"y", "shape"}, {"z"});
  m.Output("z");
  auto g = m.Import({.batch = 2});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "w").role, TensorRole::kParameter);
  EXPECT_EQ(Named(*g, "b").role, TensorRole::kParameter);
  EXPECT_EQ(Named(*g, "b").data, (std::vector<double>{1, 2, 3}));
  EXPECT_FALSE(g->FindTensor("shape").has_value());  // an integer initializer folds
  EXPECT_EQ(CountParameters(*g), 15);
}

TEST(OnnxOps, DataInputsOptionOverridesTheRule) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.Input("bias", {4});  // would be a parameter by the rule
  m.Node("Add", {"x", "bias"}, {"y"});
  m.Output("y");
  auto automatic = m.Import();
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_EQ(Named(*automatic, "bias").role, TensorRole::kParameter);
  auto manual = m.Import({.data_inputs = {"x", "bias"}});
  ASSERT_TRUE(manual.ok()) << manual.status();
  EXPECT_EQ(Named(*manual, "bias").role, TensorRole::kInput);
  EXPECT_EQ(CountParameters(*manual), 0);
}

TEST(OnnxOps, NodesOutOfOrderAreSortedAndUnnamedNodesGetNames) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  auto& relu = m.Node("Relu", {"h"}, {"y"});
  relu.clear_name();
  auto& neg = m.Node("Neg", {"x"}, {"h"});
  neg.clear_name();
  m.Output("y");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->num_nodes(), 2);
  EXPECT_EQ(g->node(0).kind, OpKind::kNeg);
  EXPECT_EQ(g->node(0).name, "Neg_1");
  EXPECT_EQ(g->node(1).name, "Relu_0");
  EXPECT_EQ(g->outputs(), std::vector<TensorId>{*g->FindTensor("y")});
}

}  // namespace
}  // namespace tessera::graph
