// ONNX -> IR: the reshape family, Gather, Identity, and constants too large to fold.
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/op_params.h"
#include "tessera/graph/onnx/translate.h"

namespace tessera::graph::onnx_import {
namespace {

absl::StatusOr<TensorId> Data(NodeCtx& c) {
  if (c.num_inputs() < 1) return c.Error("needs an input");
  return c.Tensor(0);
}

absl::Status Reshape(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(ReshapeAttrs a, ReadReshape(c));
  return c.Emit(OpKind::kReshape, {x}, std::move(a), 1);
}

absl::Status Flatten(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", 1));
  return c.Emit(OpKind::kFlatten, {x}, AxisAttrs{axis}, 1);
}

absl::Status Transpose(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> perm, c.attrs().Ints("perm", {}));
  return c.Emit(OpKind::kTranspose, {x}, PermAttrs{std::move(perm)}, 1);
}

absl::Status Concat(NodeCtx& c) {
  if (!c.attrs().Has("axis")) return c.attrs().Error("axis", "is required");
  TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", 0));
  std::vector<TensorId> inputs;
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    TS_ASSIGN_OR_RETURN(TensorId t, c.Tensor(i));
    inputs.push_back(t);
  }
  if (inputs.empty()) return c.Error("needs at least one input");
  return c.Emit(OpKind::kConcat, std::move(inputs), AxisAttrs{axis}, 1);
}

absl::Status Split(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(SplitAttrs a, ReadSplit(c, c.shape(0)));
  if (c.num_outputs() < 1) return c.Error("has no outputs");
  return c.Emit(OpKind::kSplit, {x}, std::move(a));
}

absl::Status Slice(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(SliceAttrs a, ReadSlice(c));
  return c.Emit(OpKind::kSlice, {x}, std::move(a), 1);
}

absl::Status SqueezeUnsqueeze(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadAxes(c, 1));
  const OpKind kind = c.op_type() == "Squeeze" ? OpKind::kSqueeze : OpKind::kUnsqueeze;
  if (kind == OpKind::kUnsqueeze && axes.empty()) return c.Error("needs axes");
  return c.Emit(kind, {x}, AxesAttrs{.axes = std::move(axes)}, 1);
}

absl::Status Gather(NodeCtx& c) {
  if (c.num_inputs() != 2) return c.Error("needs inputs data and indices");
  TS_ASSIGN_OR_RETURN(TensorId data, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId indices, c.Tensor(1));
  TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", 0));
  return c.Emit(OpKind::kGather, {data, indices}, AxisAttrs{axis}, 1);
}

absl::Status Expand(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.ConstInts(1, "shape"));
  return c.Emit(OpKind::kExpand, {x}, ExpandAttrs{std::move(shape)}, 1);
}

absl::Status Pad(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  PadAttrs a;
  if (c.opset() >= 11) {
    TS_ASSIGN_OR_RETURN(a.pads, c.ConstInts(1, "pads"));
    if (c.has_input(2)) {
      TS_ASSIGN_OR_RETURN(a.value, c.ConstScalar(2, "constant_value"));
    }
    if (c.has_input(3)) return c.Error("the axes input (opset 18) is not supported");
  } else {
    TS_ASSIGN_OR_RETURN(a.pads, c.attrs().Ints("pads", {}));
    TS_ASSIGN_OR_RETURN(a.value, c.attrs().Float("value", 0.0));
  }
  TS_ASSIGN_OR_RETURN(std::string mode, c.attrs().String("mode", "constant"));
  if (mode == "constant") {
    a.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    a.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    a.mode = PadMode::kEdge;
  } else {
    return c.attrs().Error("mode", absl::StrCat("is '", mode, "'; expected constant, reflect or edge"));
  }
  return c.Emit(OpKind::kPad, {x}, std::move(a), 1);
}

// Identity stays an IR node. On a parameter it is torch's deduplication (equal
// folded tensors, or equal-valued parameters): the output is the same parameter
// under another name, which ParameterSources follows, so it counts once.
absl::Status Identity(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, Data(c));
  return c.Emit(OpKind::kIdentity, {x}, std::monostate{}, 1);
}

// A ConstantOfShape above the folding limit: a constant tensor without values.
absl::Status ConstantOfShape(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.ConstInts(0, "shape"));
  auto shape = CheckedDims(dims.data(), static_cast<int>(dims.size()));
  if (!shape.ok()) return c.Error(shape.status().message());
  DType dtype = DType::kF32;
  TS_ASSIGN_OR_RETURN(const onnx::TensorProto* value, c.attrs().Tensor("value"));
  if (value != nullptr) {
    auto d = DTypeFromOnnx(value->data_type());
    if (!d.ok()) return c.Error(d.status().message());
    dtype = *d;
  }
  if (!c.has_output(0)) return absl::OkStatus();
  Importer& im = c.importer();
  const std::string& name = c.proto().output(0);
  TS_ASSIGN_OR_RETURN(Value * v, im.Define(name));
  v->shape = *shape;
  v->dtype = dtype;
  TS_ASSIGN_OR_RETURN(TensorId t, im.graph().AddTensor({.name = name, .shape = *shape,
                                                        .dtype = dtype,
                                                        .role = TensorRole::kConstant}));
  im.Find(name)->tensor = t;
  return absl::OkStatus();
}

}  // namespace

std::vector<Translation> LayoutTranslations() {
  return {{"Reshape", Reshape},     {"Flatten", Flatten},     {"Transpose", Transpose},
          {"Concat", Concat},       {"Split", Split},         {"Slice", Slice},
          {"Squeeze", SqueezeUnsqueeze}, {"Unsqueeze", SqueezeUnsqueeze},
          {"Gather", Gather},       {"Expand", Expand},       {"Pad", Pad},
          {"Identity", Identity},   {"ConstantOfShape", ConstantOfShape}};
}

}  // namespace tessera::graph::onnx_import
