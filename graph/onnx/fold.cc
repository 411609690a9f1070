// Constant folding: which ops fold, and evaluating one node.
#include "tessera/graph/onnx/fold.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/op_params.h"

namespace tessera::graph::onnx_import {
namespace {

using FoldFn = absl::StatusOr<bool> (*)(NodeCtx&);

const absl::flat_hash_map<std::string, BinaryFn>& BinaryOps() {
  static const auto* ops = new absl::flat_hash_map<std::string, BinaryFn>{
      {"Add", BinaryFn::kAdd},       {"Sub", BinaryFn::kSub},
      {"Mul", BinaryFn::kMul},       {"Div", BinaryFn::kDiv},
      {"Pow", BinaryFn::kPow},       {"Equal", BinaryFn::kEqual},
      {"Less", BinaryFn::kLess},     {"Greater", BinaryFn::kGreater},
      {"LessOrEqual", BinaryFn::kLessOrEqual}, {"GreaterOrEqual", BinaryFn::kGreaterOrEqual},
      {"And", BinaryFn::kAnd},       {"Or", BinaryFn::kOr},
      {"Xor", BinaryFn::kXor}};
  return *ops;
}

const absl::flat_hash_map<std::string, UnaryFn>& UnaryOps() {
  static const auto* ops = new absl::flat_hash_map<std::string, UnaryFn>{
      {"Neg", UnaryFn::kNeg},   {"Abs", UnaryFn::kAbs},   {"Sqrt", UnaryFn::kSqrt},
      {"Reciprocal", UnaryFn::kReciprocal}, {"Floor", UnaryFn::kFloor},
      {"Ceil", UnaryFn::kCeil}, {"Exp", UnaryFn::kExp},   {"Log", UnaryFn::kLog},
      {"Not", UnaryFn::kNot},   {"Relu", UnaryFn::kRelu}};
  return *ops;
}

absl::StatusOr<bool> SetOne(NodeCtx& c, absl::StatusOr<std::optional<ConstTensor>> r) {
  if (!r.ok()) return c.Error(r.status().message());
  if (!r->has_value()) return false;
  TS_RETURN_IF_ERROR(c.SetConst(0, std::move(**r)));
  return true;
}

absl::StatusOr<bool> FoldBinaryNode(NodeCtx& c) {
  if (c.num_inputs() != 2) return c.Error("needs 2 inputs");
  BinaryFn fn = BinaryFn::kMod;
  if (c.op_type() == "Mod") {
    TS_ASSIGN_OR_RETURN(int64_t fmod, c.attrs().Int("fmod", 0));
    if (fmod) fn = BinaryFn::kFMod;
  } else {
    fn = BinaryOps().at(c.op_type());
  }
  return SetOne(c, FoldBinary(*c.Const(0), *c.Const(1), fn));
}

absl::StatusOr<bool> FoldVariadic(NodeCtx& c) {  // Min, Max, Sum
  const BinaryFn fn = c.op_type() == "Min" ? BinaryFn::kMin
                      : c.op_type() == "Max" ? BinaryFn::kMax : BinaryFn::kAdd;
  if (c.num_inputs() < 1) return c.Error("needs at least one input");
  ConstTensor acc = *c.Const(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    auto r = FoldBinary(acc, *c.Const(i), fn);
    if (!r.ok()) return c.Error(r.status().message());
    if (!r->has_value()) return false;
    acc = std::move(**r);
  }
  TS_RETURN_IF_ERROR(c.SetConst(0, std::move(acc)));
  return true;
}

absl::StatusOr<bool> FoldUnaryNode(NodeCtx& c) {
  TS_RETURN_IF_ERROR(c.SetConst(0, FoldUnary(*c.Const(0), UnaryOps().at(c.op_type()))));
  return true;
}

// The node's tensor attribute "value" decoded (nullopt when absent); an error
// when it cannot be decoded or is above the folding limit.
absl::StatusOr<std::optional<ConstTensor>> ValueAttr(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(const onnx::TensorProto* t, c.attrs().Tensor("value"));
  if (t == nullptr) return std::nullopt;
  auto decl = DecodeTensorDecl(*t);
  if (!decl.ok()) return c.Error(decl.status().message());
  auto values = DecodeTensorValues(*t, *decl);
  if (!values.ok()) return c.Error(values.status().message());
  if (!values->has_value()) {
    return c.Error(absl::StrCat("the constant ", ShapeString(decl->shape),
                                " has no data or is above the folding limit of ",
                                kMaxFoldElements, " elements"));
  }
  return std::move(**values);
}

absl::StatusOr<bool> FoldConstant(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(std::optional<ConstTensor> value, ValueAttr(c));
  if (value) {
    TS_RETURN_IF_ERROR(c.SetConst(0, std::move(*value)));
    return true;
  }
  for (const char* name : {"value_int", "value_ints", "value_float", "value_floats"}) {
    const onnx::AttributeProto* a = c.attrs().Find(name);
    if (a == nullptr) continue;
    const std::string n = name;
    if (n == "value_int") {
      TS_ASSIGN_OR_RETURN(int64_t v, c.attrs().Int(n, 0));
      TS_RETURN_IF_ERROR(c.SetConst(0, ConstTensor::Ints(DType::kI64, {}, {v})));
    } else if (n == "value_ints") {
      TS_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.attrs().Ints(n, {}));
      TS_RETURN_IF_ERROR(c.SetConst(0, ConstTensor::Vector(std::move(v))));
    } else if (n == "value_float") {
      TS_ASSIGN_OR_RETURN(double v, c.attrs().Float(n, 0));
      TS_RETURN_IF_ERROR(c.SetConst(0, ConstTensor::Floats(DType::kF32, {}, {v})));
    } else {
      if (a->type() != onnx::AttributeProto::FLOATS) {
        return c.attrs().Error(n, "must be FLOATS");
      }
      std::vector<double> v(a->floats().begin(), a->floats().end());
      const int64_t size = static_cast<int64_t>(v.size());
      TS_RETURN_IF_ERROR(c.SetConst(0, ConstTensor::Floats(DType::kF32, {size}, std::move(v))));
    }
    return true;
  }
  return c.Error("has no value attribute Tessera can read (value, value_int(s), value_float(s))");
}

absl::StatusOr<bool> FoldShape(NodeCtx& c) {
  const Shape& s = c.shape(0);
  const int64_t rank = static_cast<int64_t>(s.size());
  if (c.op_type() == "Size") {
    TS_RETURN_IF_ERROR(c.SetConst(0, ConstTensor::Ints(DType::kI64, {}, {NumElements(s)})));
    return true;
  }
  TS_ASSIGN_OR_RETURN(int64_t start, c.attrs().Int("start", 0));
  TS_ASSIGN_OR_RETURN(int64_t end, c.attrs().Int("end", rank));
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  start = clamp(start);
  end = clamp(end);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(s[i]);
  TS_RETURN_IF_ERROR(c.SetConst(0, ConstTensor::Vector(std::move(dims))));
  return true;
}

absl::StatusOr<bool> FoldConstantOfShape(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.ConstInts(0, "shape"));
  auto shape = CheckedDims(dims.data(), static_cast<int>(dims.size()));
  if (!shape.ok()) return c.Error(shape.status().message());
  ConstTensor fill = ConstTensor::Floats(DType::kF32, {}, {0.0});
  TS_ASSIGN_OR_RETURN(std::optional<ConstTensor> value, ValueAttr(c));
  if (value) {
    if (value->size() != 1) return c.Error("value must hold one element");
    fill = std::move(*value);
  }
  fill.shape = {};
  auto out = FoldExpand(fill, *shape);
  if (!out) return false;  // too large: the importer keeps it as a constant without values
  TS_RETURN_IF_ERROR(c.SetConst(0, std::move(*out)));
  return true;
}

absl::StatusOr<bool> FoldRangeNode(NodeCtx& c) {
  if (c.num_inputs() != 3) return c.Error("needs 3 inputs");
  return SetOne(c, FoldRange(*c.Const(0), *c.Const(1), *c.Const(2)));
}

absl::StatusOr<bool> FoldWhereNode(NodeCtx& c) {
  if (c.num_inputs() != 3) return c.Error("needs 3 inputs");
  return SetOne(c, FoldWhere(*c.Const(0), *c.Const(1), *c.Const(2)));
}

absl::StatusOr<bool> FoldCast(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(int64_t to, c.attrs().Int("to", onnx::TensorProto::FLOAT));
  auto dtype = DTypeFromOnnx(static_cast<int>(to));
  if (!dtype.ok()) return c.Error(dtype.status().message());
  TS_RETURN_IF_ERROR(c.SetConst(0, CastConst(*c.Const(0), *dtype)));
  return true;
}

}  // namespace

absl::StatusOr<bool> FoldLayoutNode(NodeCtx& c);  // fold_layout_nodes.cc

namespace {

const absl::flat_hash_map<std::string, FoldFn>& FoldTable() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, FoldFn>{
        {"Constant", FoldConstant}, {"Shape", FoldShape},       {"Size", FoldShape},
        {"ConstantOfShape", FoldConstantOfShape}, {"Range", FoldRangeNode},
        {"Where", FoldWhereNode},   {"Cast", FoldCast},         {"Min", FoldVariadic},
        {"Max", FoldVariadic},      {"Sum", FoldVariadic},      {"Mod", FoldBinaryNode},
        {"Tile", FoldTileNode}};
    for (const auto& [name, fn] : BinaryOps()) (*t)[name] = FoldBinaryNode;
    for (const auto& [name, fn] : UnaryOps()) (*t)[name] = FoldUnaryNode;
    for (const char* name : {"Identity", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice",
                             "Expand", "Reshape", "Flatten", "Transpose", "ReduceProd",
                             "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "Split"}) {
      (*t)[name] = FoldLayoutNode;
    }
    return t;
  }();
  return *table;
}

}  // namespace

bool IsFoldable(absl::string_view op_type) { return FoldTable().contains(op_type); }

bool IsFoldOnly(absl::string_view op_type) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Constant", "Shape", "Size", "Range", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Min", "Max", "Sum", "Mod",
      "Floor", "Ceil", "ReduceProd", "ReduceMin"};
  return ops->contains(op_type);
}

absl::StatusOr<bool> TryFold(NodeCtx& c) {
  auto it = FoldTable().find(c.op_type());
  if (it == FoldTable().end()) return false;
  const std::string& op = c.op_type();
  // Ops whose later inputs are optional; for every other op each listed input is required.
  static const auto* optional_inputs = new absl::flat_hash_set<std::string>{
      "Slice", "Squeeze", "Unsqueeze", "Split", "Concat", "ReduceSum", "ReduceMean",
      "ReduceMax", "ReduceMin", "ReduceProd"};
  if (op != "Constant" && !c.has_input(0)) return c.Error("input 0 is required");
  for (int i = 1; i < c.num_inputs(); ++i) {
    if (!c.has_input(i) && !optional_inputs->contains(op)) {
      return c.Error(absl::StrCat("input ", i, " is required"));
    }
  }
  if (op != "Shape" && op != "Size") {
    for (int i = 0; i < c.num_inputs(); ++i) {
      if (c.has_input(i) && c.Const(i) == nullptr) return false;
    }
  } else if (c.num_inputs() != 1) {
    return c.Error("needs one input");
  }
  if (c.num_outputs() < 1 || !c.has_output(0)) return c.Error("needs an output");
  return it->second(c);
}

}  // namespace tessera::graph::onnx_import
