// Re-deriving a static export for another batch: where the batch is in each value of the
// second run, and which rule looks at which node (batch_rewrite.h).
#include "tessera/graph/onnx/batch_rewrite.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {

std::string BakedBatchAdvice(int64_t old_batch) {
  return absl::StrCat(
      "re-export with a dynamic batch axis (torch.onnx.export(..., dynamic_axes={'input': "
      "{0: 'batch'}})), or trace at a batch that no other dimension of the model equals "
      "(this file was traced at batch ", old_batch, ")");
}

const ValueRecord* BatchRewriter::Reference(const std::string& name) const {
  auto it = reference_.find(name);
  return it == reference_.end() ? nullptr : &it->second;
}

BatchAxis BatchRewriter::Find(const std::string& name) const {
  auto it = batch_.find(name);
  return it == batch_.end() ? BatchAxis{} : it->second;
}

BatchAxis BatchRewriter::FromShapes(const Shape& reference, const Shape& now) const {
  if (reference.size() != now.size()) return {};
  int axis = -1;
  for (size_t i = 0; i < now.size(); ++i) {
    if (reference[i] == now[i]) continue;
    if (axis >= 0) return {};  // two axes changed (e.g. a [B, B] mask): no single batch axis
    axis = static_cast<int>(i);
  }
  if (axis < 0 || old_batch_ <= 0 || reference[axis] % old_batch_ != 0) return {};
  // size went from k*b0 to k*B
  if (static_cast<__int128>(now[axis]) * old_batch_ !=
      static_cast<__int128>(reference[axis]) * new_batch_) {
    return {};
  }
  return {.axis = axis, .inner = 0};
}

void BatchRewriter::RecordInput(Importer& im, const std::string& name) {
  const Value* v = im.Find(name);
  const ValueRecord* ref = Reference(name);
  if (v == nullptr || ref == nullptr) return;
  BatchAxis b = FromShapes(ref->shape, v->shape);
  if (b.axis >= 0) b.inner = 1;
  batch_[name] = b;
}

namespace {

// The inner factor an output inherits from the node's inputs: that of every input whose
// batch axis had the output's reference size; 0 when none has, or they disagree.
int64_t InheritedInner(const BatchRewriter& r, const onnx::NodeProto& node, int64_t size) {
  int64_t inner = -1;
  for (const std::string& in : node.input()) {
    if (in.empty()) continue;
    const BatchAxis b = r.Find(in);
    const ValueRecord* ref = r.Reference(in);
    if (b.axis < 0 || ref == nullptr || ref->shape[b.axis] != size) continue;
    if (inner >= 0 && inner != b.inner) return 0;
    inner = b.inner;
  }
  return inner < 0 ? 0 : inner;
}

}  // namespace

void BatchRewriter::RecordOutputs(Importer& im, const onnx::NodeProto& node) {
  for (const std::string& out : node.output()) {
    if (out.empty()) continue;
    const Value* v = im.Find(out);
    const ValueRecord* ref = Reference(out);
    if (v == nullptr || ref == nullptr) continue;
    BatchAxis b = FromShapes(ref->shape, v->shape);
    if (b.axis >= 0) {
      const std::string& op = node.op_type();
      if ((op == "Reshape" || op == "Flatten") && node.input_size() > 0) {
        // A reshape moves the batch inside merged axes: follow it from the input.
        const BatchAxis in = Find(node.input(0));
        const ValueRecord* in_ref = Reference(node.input(0));
        std::optional<BatchAxis> moved;
        if (in.axis >= 0 && in.inner > 0 && in_ref != nullptr) {
          moved = ReshapedBatch(in_ref->shape, in, ref->shape, old_batch_);
        }
        b.inner = moved && moved->axis == b.axis ? moved->inner : 0;
      } else {
        b.inner = InheritedInner(*this, node, ref->shape[b.axis]);
      }
    }
    batch_[out] = b;
  }
}

absl::StatusOr<std::optional<onnx::NodeProto>> BatchRewriter::Rewrite(
    Importer& im, const onnx::NodeProto& node, const std::string& node_name) {
  const std::string& op = node.op_type();
  NodeCtx c(im, node, node_name);
  if (op == "Reshape") return RewriteReshape(*this, c);
  if (op == "Expand") return RewriteExpand(*this, c);
  if (op == "Slice") return RewriteSlice(*this, c);
  if (op == "LSTM") return RewriteLstmStates(*this, c);
  return std::nullopt;
}

std::string IntsString(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

onnx::NodeProto WithInput(const onnx::NodeProto& node, int input, const std::string& name) {
  onnx::NodeProto copy = node;
  copy.set_input(input, name);
  return copy;
}

std::optional<IntsBoth> ConstIntsBoth(const BatchRewriter& r, const NodeCtx& c, int i) {
  if (!c.has_input(i) || c.Const(i) == nullptr) return std::nullopt;
  const ValueRecord* ref = r.Reference(c.proto().input(i));
  if (ref == nullptr || !ref->constant || ref->constant->size() > 4096) return std::nullopt;
  return IntsBoth{ref->constant->AsInts(), c.Const(i)->AsInts()};
}

absl::StatusOr<std::string> DefineRewritten(BatchRewriter& r, NodeCtx& c, int input,
                                            ConstTensor value) {
  Importer& im = c.importer();
  const std::string name =
      im.UniqueTensorName(absl::StrCat(c.proto().input(input), "/batch_", r.new_batch()));
  if (absl::Status s = im.ChargeFolded(value.size()); !s.ok()) return c.Error(s.message());
  TS_ASSIGN_OR_RETURN(Value * v, im.Define(name));
  v->shape = value.shape;
  v->dtype = value.dtype;
  v->constant = std::move(value);
  return name;
}

}  // namespace tessera::graph::onnx_import
