// Graph files: every kind of malformed file gives an error that names the
// source and the offending field.
#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "graph_test_util.h"
#include "sample_graphs.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph::testing {
namespace {

using nlohmann::json;

// SmallNet: tensors 0 x, 1 labels, 2 w0, 3 w1, 4 b1, 5 wf, 6 bf, 7 scale, 8 c0,
// 9 r0, 10 p0, 11 c1, 12 f, 13 logits, 14 loss, 15 scaled; nodes 0 conv0,
// 1 relu0, 2 pool0, 3 conv1, 4 flat, 5 fc, 6 loss, 7 mul.
json BaseDoc() { return json::parse(GraphToJson(SmallNet())); }

absl::Status Load(const json& doc) { return GraphFromJson(doc.dump(), "model.json").status(); }
absl::Status LoadText(const std::string& text) {
  return GraphFromJson(text, "model.json").status();
}

TEST(GraphJsonErrorsTest, BaseDocumentLoads) { EXPECT_TRUE(Load(BaseDoc()).ok()); }

TEST(GraphJsonErrorsTest, ExampleMessageIsExact) {
  json doc = BaseDoc();
  doc["nodes"][3]["attrs"]["strides"] = "2";
  EXPECT_EQ(
      Load(doc).message(),
      R"(model.json: nodes[3] ("conv1").attrs.strides: expected an array of integers, got "2")");
}

TEST(GraphJsonErrorsTest, UnknownNames) {
  json doc = BaseDoc();
  doc["nodes"][1]["op"] = "Relu6";
  EXPECT_TRUE(HasError(Load(doc), {R"(model.json: nodes[1] ("relu0").op: unknown op 'Relu6')"}));
  doc = BaseDoc();
  doc["tensors"][0]["dtype"] = "f64";
  EXPECT_TRUE(HasError(Load(doc), {R"(model.json: tensors[0] ("x").dtype: unknown dtype 'f64')",
                                   "expected one of f32"}));
  doc = BaseDoc();
  doc["tensors"][2]["role"] = "weight";
  EXPECT_TRUE(HasError(
      Load(doc), {R"(tensors[2] ("w0").role: expected one of "input", )", R"(got "weight")"}));
}

TEST(GraphJsonErrorsTest, DuplicateNames) {
  json doc = BaseDoc();
  doc["tensors"][3]["name"] = "w0";
  EXPECT_TRUE(
      HasError(Load(doc), {R"(model.json: tensors[3] ("w0"): tensor name 'w0' is used twice)"}));
  doc = BaseDoc();
  doc["nodes"][4]["name"] = "conv1";
  EXPECT_TRUE(
      HasError(Load(doc), {R"(model.json: nodes[4] ("conv1"): node name "conv1" is used twice)"}));
  doc = BaseDoc();
  doc["outputs"] = json::array({"loss", "loss"});
  EXPECT_TRUE(HasError(Load(doc), {R"(model.json: outputs[1]: tensor "loss" is listed twice)"}));
  doc = BaseDoc();
  doc["nodes"][0]["name"] = "";
  EXPECT_TRUE(HasError(Load(doc), {"nodes[0].name: a node needs a non-empty name"}));
  doc = BaseDoc();
  doc["tensors"][0]["name"] = "";
  EXPECT_TRUE(HasError(Load(doc), {"tensors[0] (\"\"): a tensor needs a non-empty name"}));
}

TEST(GraphJsonErrorsTest, DanglingReferences) {
  json doc = BaseDoc();
  doc["nodes"][5]["inputs"][1] = "wx";
  EXPECT_TRUE(
      HasError(Load(doc), {R"(model.json: nodes[5] ("fc").inputs[1]: no tensor is named "wx")"}));
  doc = BaseDoc();
  doc["nodes"][0]["outputs"][0] = "nope";
  EXPECT_TRUE(HasError(Load(doc), {R"(nodes[0] ("conv0").outputs[0]: no tensor is named "nope")"}));
  doc = BaseDoc();
  doc["outputs"][0] = "nope";
  EXPECT_TRUE(HasError(Load(doc), {R"(model.json: outputs[0]: no tensor is named "nope")"}));
}

TEST(GraphJsonErrorsTest, InputCountsAndRequiredInputs) {
  json doc = BaseDoc();
  doc["nodes"][1]["inputs"] = json::array({"c0", "c0"});
  EXPECT_TRUE(HasError(Load(doc), {R"(nodes[1] ("relu0"))", "has 2 inputs; expected 1 to 1"}));
  doc = BaseDoc();
  doc["nodes"][5]["inputs"][1] = nullptr;
  EXPECT_TRUE(HasError(Load(doc), {R"(nodes[5] ("fc").inputs[1]: input 1 of Gemm is required)"}));
  doc = BaseDoc();
  doc["nodes"][5]["outputs"] = json::array();
  EXPECT_TRUE(HasError(Load(doc), {R"(nodes[5] ("fc"))", "has 0 outputs; expected 1"}));
}

TEST(GraphJsonErrorsTest, StructuralErrors) {
  json doc = BaseDoc();
  doc["nodes"][1]["outputs"][0] = "c0";  // c0 is conv0's output
  EXPECT_TRUE(HasError(Load(doc), {R"(nodes[1] ("relu0"))", "already written by node 'conv0'"}));
  doc = BaseDoc();
  doc["nodes"][1]["outputs"][0] = "w0";
  EXPECT_TRUE(HasError(Load(doc), {"writes tensor 'w0', which is a parameter"}));
  doc = BaseDoc();
  doc["nodes"][0]["inputs"][0] = "r0";  // conv0 <- relu0 <- conv0
  EXPECT_TRUE(HasError(Load(doc), {"model.json: ", "has a cycle through node"}));
  doc = BaseDoc();
  doc["tensors"].push_back(
      {{"name", "ghost"}, {"shape", json::array({1})}, {"dtype", "f32"}, {"role", "activation"}});
  doc["nodes"][7]["inputs"][1] = "ghost";
  EXPECT_TRUE(HasError(
      Load(doc), {"model.json: activation 'ghost' is read by node 'mul' but no node produces it"}));
  doc = BaseDoc();
  doc["tensors"].push_back(
      {{"name", "ghost"}, {"shape", json::array({1})}, {"dtype", "f32"}, {"role", "activation"}});
  doc["outputs"] = json::array({"ghost"});
  EXPECT_TRUE(HasError(Load(doc), {"graph output 'ghost' is an activation that no node produces"}));
}

TEST(GraphJsonErrorsTest, StoredShapesMustAgreeWithInference) {
  json doc = BaseDoc();
  doc["tensors"][13]["shape"] = json::array({1, 11});
  EXPECT_TRUE(HasError(
      Load(doc),
      {R"(model.json: tensors[13] ("logits"): the file says [1,11] f32 but node "fc" (Gemm) produces [1,10] f32)"}));
  doc = BaseDoc();
  doc["tensors"][9]["dtype"] = "f16";
  EXPECT_TRUE(HasError(
      Load(doc), {R"(tensors[9] ("r0"): the file says [1,4,6,6] f16)", "produces [1,4,6,6] f32"}));
}

TEST(GraphJsonErrorsTest, InferenceErrorsNameTheFileAndNode) {
  json doc = BaseDoc();
  doc["nodes"][5]["attrs"]["trans_b"] = false;
  EXPECT_TRUE(HasError(Load(doc),
                       {"model.json: node 'fc' (Gemm) with inputs 'f' [1,72] f32, 'wf' [10,72] f32",
                        "inner dimensions differ"}));
}

TEST(GraphJsonErrorsTest, Attributes) {
  json doc = BaseDoc();
  doc["nodes"][1]["attrs"] = json::object({{"alpha", 1}});
  EXPECT_TRUE(HasError(Load(doc), {R"(nodes[1] ("relu0").attrs: Relu takes no attributes)"}));
  doc = BaseDoc();
  doc["nodes"][0]["attrs"]["stride"] = json::array({1, 1});
  EXPECT_TRUE(HasError(
      Load(doc),
      {R"(nodes[0] ("conv0").attrs: unknown field "stride"; expected one of "kernel_shape", "strides", "pads", "dilations", "groups")"}));
  doc = BaseDoc();
  doc["nodes"][0]["attrs"]["strides"] = json::array({1, "1"});
  EXPECT_TRUE(HasError(Load(doc),
                       {R"(nodes[0] ("conv0").attrs.strides[1]: expected an integer, got "1")"}));
  doc = BaseDoc();
  doc["nodes"][5]["attrs"]["trans_b"] = 1;
  EXPECT_TRUE(
      HasError(Load(doc), {R"(nodes[5] ("fc").attrs.trans_b: expected true or false, got 1)"}));
  doc = BaseDoc();
  doc["nodes"][5]["attrs"]["alpha"] = "Infinity";
  EXPECT_TRUE(HasError(
      Load(doc), {R"(attrs.alpha: expected a number (or "inf", "-inf", "nan"), got "Infinity")"}));
  json lstm = json::parse(GraphToJson(SampleGraph(OpKind::kLstm)));
  lstm["nodes"][0]["attrs"]["direction"] = "both";
  EXPECT_TRUE(HasError(
      Load(lstm),
      {R"(nodes[0] ("op").attrs.direction: expected one of "forward", "reverse", "bidirectional", got "both")"}));
  json cast = json::parse(GraphToJson(SampleGraph(OpKind::kCast)));
  cast["nodes"][0]["attrs"]["to"] = "float";
  EXPECT_TRUE(HasError(
      Load(cast),
      {R"(attrs.to: expected one of "f32", "f16", "bf16", "i32", "i64", "bool", got "float")"}));
}

TEST(GraphJsonErrorsTest, HeaderAndTopLevel) {
  json doc = BaseDoc();
  doc["version"] = 2;
  EXPECT_EQ(Load(doc).message(),
            "model.json: version: unsupported version 2; this build of Tessera reads version 1");
  doc = BaseDoc();
  doc["format"] = "onnx";
  EXPECT_TRUE(
      HasError(Load(doc), {R"(model.json: format: expected "tessera-graph")", R"(got "onnx")"}));
  doc = BaseDoc();
  doc.erase("nodes");
  EXPECT_EQ(Load(doc).message(), R"(model.json: missing field "nodes")");
  doc = BaseDoc();
  doc["tensors"][0].erase("dtype");
  EXPECT_EQ(Load(doc).message(), R"(model.json: tensors[0] ("x"): missing field "dtype")");
  doc = BaseDoc();
  doc["extra"] = 1;
  EXPECT_TRUE(
      HasError(Load(doc), {R"(model.json: unknown field "extra"; expected one of "format")"}));
  doc = BaseDoc();
  doc["tensors"][0]["comment"] = "hi";
  EXPECT_TRUE(HasError(Load(doc), {R"(tensors[0]: unknown field "comment")"}));
  EXPECT_TRUE(HasError(LoadText("[]"),
                       {"model.json: expected a tessera-graph JSON object, got an empty array"}));
  EXPECT_TRUE(
      HasError(LoadText("42"), {"model.json: expected a tessera-graph JSON object, got 42"}));
}

TEST(GraphJsonErrorsTest, TensorData) {
  json doc = BaseDoc();
  doc["tensors"][7]["data"] = json::array({1, 2});
  EXPECT_TRUE(HasError(
      Load(doc),
      {R"(model.json: tensors[7] ("scale").data: has 2 values; shape [1] has 1 elements)"}));
  doc = BaseDoc();
  doc["tensors"][7]["data"] = json::array({"x"});
  EXPECT_TRUE(HasError(Load(doc), {R"(tensors[7] ("scale").data[0]: expected a number)"}));
  doc = BaseDoc();
  doc["tensors"][7]["data"] = json::array({"-inf"});
  EXPECT_TRUE(Load(doc).ok());
}

TEST(GraphJsonErrorsTest, ShapesAndHugeNumbers) {
  json doc = BaseDoc();
  doc["tensors"][0]["shape"] = json::array();
  for (int i = 0; i < 17; ++i) doc["tensors"][0]["shape"].push_back(1);
  EXPECT_TRUE(HasError(Load(doc), {R"(tensors[0] ("x").shape: rank 17 exceeds the limit of 16)"}));
  doc = BaseDoc();
  doc["tensors"][2]["shape"] = json::array({int64_t{1} << 62, 4});
  EXPECT_TRUE(HasError(Load(doc),
                       {R"(tensors[2] ("w0").shape: shape [4611686018427387904,4] is too large)"}));
  doc = BaseDoc();
  doc["tensors"][2]["shape"] = json::array({int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31});
  EXPECT_TRUE(HasError(Load(doc), {"too large"}));
  doc = BaseDoc();
  doc["tensors"][2]["shape"] = json::array({-1, 3});
  EXPECT_TRUE(HasError(Load(doc), {R"(tensors[2] ("w0").shape: dimension 0 is -1)"}));

  const std::string text = GraphToJson(SmallNet());
  auto with_dim = [&text](const std::string& dim) {
    std::string t = text;
    const std::string from = R"("shape": [4, 3, 3, 3])";
    t.replace(t.find(from), from.size(), R"("shape": [)" + dim + R"(, 3, 3, 3])");
    return LoadText(t);
  };
  EXPECT_TRUE(HasError(with_dim("1e400"), {"model.json: not valid JSON", "number overflow"}));
  EXPECT_TRUE(HasError(with_dim("99999999999999999999"),
                       {R"(tensors[2] ("w0").shape[0]: expected an integer, got 1e+20)"}));
  EXPECT_TRUE(HasError(with_dim("18446744073709551615"),
                       {"shape[0]: integer 18446744073709551615 is too large"}));
  EXPECT_TRUE(HasError(with_dim("4.0"), {"shape[0]: expected an integer, got 4.0"}));
  EXPECT_TRUE(HasError(with_dim("-9223372036854775808"), {"dimension 0 is -9223372036854775808"}));
}

// The path the reader reports for a value, given its JSON pointer tokens.
std::string ExpectedPath(const json& doc, const std::vector<std::string>& tokens) {
  std::string path;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool index = !t.empty() && std::isdigit(static_cast<unsigned char>(t[0]));
    if (index) {
      path += "[" + t + "]";
    } else {
      path += (path.empty() ? "" : ".") + t;
    }
    // tensors[i] and nodes[i] carry their name, except on the name itself.
    if (i == 1 && (tokens[0] == "tensors" || tokens[0] == "nodes") && tokens.size() > 2 &&
        tokens[2] != "name") {
      path += " (\"" + doc[tokens[0]][std::stoul(t)]["name"].get<std::string>() + "\")";
    }
  }
  return path;
}

enum class Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
Kind KindOf(const json& v) {
  if (v.is_null()) return Kind::kNull;
  if (v.is_boolean()) return Kind::kBool;
  if (v.is_number_integer()) return Kind::kInt;
  if (v.is_number_float()) return Kind::kFloat;
  if (v.is_string()) return Kind::kString;
  if (v.is_array()) return Kind::kArray;
  return Kind::kObject;
}

void CollectPointers(const json& v, std::vector<std::string>& tokens,
                     std::vector<std::vector<std::string>>& out) {
  if (!tokens.empty()) out.push_back(tokens);
  if (v.is_object()) {
    for (const auto& [key, member] : v.items()) {
      tokens.push_back(key);
      CollectPointers(member, tokens, out);
      tokens.pop_back();
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      tokens.push_back(std::to_string(i));
      CollectPointers(v[i], tokens, out);
      tokens.pop_back();
    }
  }
}

// Every value of the file replaced by values of other types: each gives an
// error naming that value's path (or, where the new type is allowed, loads).
TEST(GraphJsonErrorsTest, WrongTypeForEveryField) {
  json base = json::parse(GraphToJson(SmallNet()));
  // Add the members the small net lacks: data and attributes of every kind are
  // covered by the samples below.
  std::vector<json> docs = {base};
  for (OpKind kind : {OpKind::kLstm, OpKind::kPad, OpKind::kSlice, OpKind::kCtcLoss,
                      OpKind::kBatchNorm, OpKind::kSplit, OpKind::kCast}) {
    docs.push_back(json::parse(GraphToJson(SampleGraph(kind))));
  }
  const std::vector<json> replacements = {nullptr,       true,          7, 1.5, "x",
                                          json::array(), json::object()};
  int checked = 0;
  for (const json& doc : docs) {
    std::vector<std::vector<std::string>> pointers;
    std::vector<std::string> tokens;
    CollectPointers(doc, tokens, pointers);
    for (const auto& p : pointers) {
      std::string pointer;
      for (const auto& t : p) pointer += "/" + t;
      const json& original = doc[json::json_pointer(pointer)];
      const std::string path = ExpectedPath(doc, p);
      for (const json& r : replacements) {
        if (KindOf(r) == KindOf(original)) continue;
        if (KindOf(original) == Kind::kFloat && KindOf(r) == Kind::kInt)
          continue;  // ints are numbers
        // A node input may be a name or null (absent optional input).
        if (p.size() == 4 && p[2] == "inputs" && (r.is_null() || r.is_string())) continue;
        json mutated = doc;
        mutated[json::json_pointer(pointer)] = r;
        const absl::Status status = Load(mutated);
        SCOPED_TRACE(pointer + " := " + r.dump());
        ASSERT_FALSE(status.ok());
        EXPECT_TRUE(HasError(status, {"model.json: " + path + ": "}));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace tessera::graph::testing
