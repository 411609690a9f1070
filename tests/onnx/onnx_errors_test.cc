// Errors a user can cause: each names the file and the node or value at fault.
#include <string>

#include "gtest/gtest.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "onnx_test_util.h"

namespace tessera::graph {
namespace {

using testing::OnnxModel;

// The import fails and its message contains every piece of `parts`.
void ExpectError(const absl::StatusOr<Graph>& g, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(g.ok()) << "import succeeded";
  const std::string msg(g.status().message());
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << p << " in: " << msg;
}

OnnxModel Relu(int64_t opset = 13) {
  OnnxModel m(opset);
  m.Input("x", {2, 4});
  m.Node("Relu", {"x"}, {"y"}, "/relu");
  m.Output("y");
  return m;
}

TEST(OnnxErrors, UnsupportedOpTypesAreListedOnceEachInOneMessage) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.Node("TopK", {"x", "k"}, {"v", "i"}, "/TopK");
  m.ConstI64("k", {1}, {2});
  m.Node("NonZero", {"x"}, {"nz"}, "/NonZero");
  m.Node("NonZero", {"x"}, {"nz2"}, "/NonZero_1");
  auto& ms = m.Node("FusedMatMul", {"x", "x"}, {"f"}, "/fused");
  ms.set_domain("com.microsoft");
  m.Output("v");
  auto g = m.Import();
  ExpectError(g, {"test.onnx: 3 unsupported op types: ", "TopK (node \"/TopK\")",
                  "NonZero (node \"/NonZero\")", "com.microsoft.FusedMatMul (node \"/fused\")",
                  "; supported ops are listed in docs/onnx-import.md"});
  EXPECT_EQ(std::string(g.status().message()).find("/NonZero_1"), std::string::npos);
}

TEST(OnnxErrors, ShapeOnlyOpsOnDataAreUnsupported) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.ConstF32("zero", {}, {0});
  m.Node("Greater", {"x", "zero"}, {"mask"}, "/gt");
  m.Output("mask");
  ExpectError(m.Import(), {"1 unsupported op type: Greater (node \"/gt\", supported only on "
                           "values known at import time)"});
}

TEST(OnnxErrors, OpsetsOutsideElevenToSeventeen) {
  ExpectError(Relu(9).Import(), {"test.onnx: ", "opset 9", "11 to 17"});
  ExpectError(Relu(18).Import(), {"opset 18"});
  OnnxModel m = Relu(13);
  m.proto().mutable_opset_import(0)->set_domain("ai.onnx.ml");
  ExpectError(m.Import(), {"no opset_import for the default ONNX domain"});
}

TEST(OnnxErrors, UnknownValuesAndCycles) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.Node("Add", {"x", "ghost"}, {"y"}, "/add");
  m.Output("y");
  ExpectError(m.Import(), {"test.onnx: ", "node '/add' (Add) reads 'ghost'"});

  OnnxModel c(13);
  c.Input("x", {2, 4});
  c.Node("Add", {"x", "b"}, {"a"}, "/a");
  c.Node("Relu", {"a"}, {"b"}, "/b");
  c.Output("b");
  ExpectError(c.Import(), {"cycle through node '/a'"});

  OnnxModel twice(13);
  twice.Input("x", {2, 4});
  twice.Node("Relu", {"x"}, {"y"}, "/r1");
  twice.Node("Neg", {"x"}, {"y"}, "/r2");
  twice.Output("y");
  ExpectError(twice.Import(), {"node '/r2' (Neg) writes 'y'"});

  OnnxModel no_out = Relu();
  no_out.Output("nowhere");
  ExpectError(no_out.Import(), {"graph output 'nowhere'"});
}

TEST(OnnxErrors, BadInputsAndInitializers) {
  OnnxModel neg(13);
  neg.Input("x", {2, -4});
  neg.Node("Relu", {"x"}, {"y"});
  neg.Output("y");
  ExpectError(neg.Import(), {"graph input 'x'", "negative dimension -4"});

  OnnxModel huge(13);
  huge.Input("x", {int64_t{1} << 40, int64_t{1} << 40});
  huge.Node("Relu", {"x"}, {"y"});
  huge.Output("y");
  ExpectError(huge.Import(), {"graph input 'x'", "too many elements"});

  OnnxModel raw(13);
  raw.Input("x", {2, 4});
  onnx::TensorProto w;
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(4);
  w.set_raw_data(std::string(15, '\0'));  // 4 floats need 16 bytes
  raw.Initializer(w, "bias");
  raw.Node("Add", {"x", "bias"}, {"y"});
  raw.Output("y");
  ExpectError(raw.Import(), {"initializer 'bias'", "raw_data holds 15 bytes"});

  OnnxModel strings(13);
  strings.Input("s", {2}, onnx::TensorProto::STRING);
  strings.Node("Identity", {"s"}, {"y"});
  strings.Output("y");
  ExpectError(strings.Import(), {"graph input 's'", "STRING"});

  OnnxModel no_shape(13);
  no_shape.graph().add_input()->set_name("x");
  no_shape.Node("Relu", {"x"}, {"y"});
  no_shape.Output("y");
  ExpectError(no_shape.Import(), {"graph input 'x' is not a tensor"});
}

TEST(OnnxErrors, AttributesOfTheWrongTypeNameNodeAndAttribute) {
  OnnxModel m(13);
  m.Input("x", {1, 2, 8, 8});
  m.Input("w", {4, 2, 3, 3});
  auto& conv = m.Node("Conv", {"x", "w"}, {"y"}, "/conv");
  OnnxModel::AttrFloat(conv, "group", 1.0f);
  m.Output("y");
  ExpectError(m.Import(), {"node '/conv' (Conv): attribute 'group' is FLOAT; expected INT"});
}

TEST(OnnxErrors, DataDependentShapeInputsNameTheNode) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.Input("target", {2}, onnx::TensorProto::INT64);
  m.Node("Reshape", {"x", "target"}, {"y"}, "/reshape");
  m.Output("y");
  ExpectError(m.Import(), {"node '/reshape' (Reshape)", "'target'", "computed from data"});
}

TEST(OnnxErrors, ShapeErrorsNameTheNode) {
  OnnxModel m(13);
  m.Input("a", {2, 4});
  m.Input("b", {5, 3});
  m.Node("MatMul", {"a", "b"}, {"y"}, "/mm");
  m.Output("y");
  ExpectError(m.Import(), {"test.onnx: ", "node '/mm' (MatMul)", "inner dimensions differ"});
}

TEST(OnnxErrors, BatchBakedIntoAReshapeIsReportedWithTheNode) {
  // x.view(3, 8) of x [2, 3, 4]: the export batch 2 is spread over both axes of the target,
  // so it cannot be re-derived (x.view(2, 12) can: onnx_static_batch_rules_test.cc).
  OnnxModel m(13);
  m.Input("x", {2, 3, 4});
  m.ConstI64("target", {2}, {3, 8});
  m.Node("Reshape", {"x", "target"}, {"y"}, "/view");
  m.Output("y");
  ASSERT_TRUE(m.Import({.batch = 2}).ok());
  ExpectError(m.Import({.batch = 8}), {"node '/view' (Reshape)", "[3, 8]", "for batch 8",
                                       "re-export with a dynamic batch axis"});
}

TEST(OnnxErrors, BatchBakedWhereNoRuleLooksIsReportedWithTheAdvice) {
  // A constant [2, 4] added to x [2, 4]: at batch 8 the Add's shapes do not broadcast.
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.ConstF32("c", {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  m.Node("Add", {"x", "c"}, {"y"}, "/add");
  m.Output("y");
  ExpectError(m.Import({.batch = 8}), {"node '/add' (Add)", "with batch 8",
                                       "baked the export batch", "dynamic batch axis"});
}

TEST(OnnxErrors, OptionsThatDoNotFitTheModel) {
  ExpectError(Relu().Import({.data_inputs = {"images"}}), {"data input 'images'"});
  ExpectError(Relu().Import({.batch = -1}), {"batch must be >= 0"});
}

TEST(OnnxErrors, UnreadableFilesNameTheFile) {
  auto missing = ImportOnnxFile("/nonexistent/model.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/model.onnx"), std::string::npos);
  ExpectError(ImportOnnxBytes("\x08\x07\x12\xff\xff garbage", "junk.onnx"),
              {"junk.onnx: is not a valid ONNX model"});
  ExpectError(ImportOnnxBytes("", "empty.onnx"), {"empty.onnx: has no graph"});
}

}  // namespace
}  // namespace tessera::graph
