// Internal to ONNX import: re-deriving a static export for another batch.
//
// A static export (no dynamic axes) bakes the tracing batch b0 into constants: Reshape
// targets ([T, b0*heads, d]), Expand shapes, the zero initial states of an LSTM
// (torch.zeros(layers, b0, hidden)), Slice bounds. When OnnxImportOptions::batch asks for
// another batch B, the importer runs twice: once at the file's shapes (the reference), then
// at B with a BatchRewriter that rewrites such constants just before the node reading them is
// folded or translated.
//
//   Importer first(graph, opset);          ... first.Run(decls, order) at batch b0
//   BatchRewriter rewriter(first.Record(), b0, B);
//   Importer second(graph, opset);
//   second.set_batch_rewriter(&rewriter);  ... second.Run(decls_at_B, order)
//
// Soundness: nothing is rewritten by value alone. The rewriter knows where the batch is in
// every tensor of the second run by comparing its shape with the reference: the one axis
// whose size went from k*b0 to k*B. It also tracks the batch's position inside a merged
// axis (its "inner" factor: [T, B*heads, d] has the batch outside the heads, inner 4),
// which reshapes change (batch_rewrite_rules.cc). A baked constant is rewritten only where
// the op ties it to that axis; where it cannot be attributed (the batch split over axes, a
// second entry equal to b0 expanding a size-1 axis, a tracing batch of 1 that leaves the
// position open) the import fails with a message naming the node and what to do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "tessera/graph/onnx/const_tensor.h"
#include "tessera/graph/shape.h"

namespace tessera::graph::onnx_import {

class Importer;
class NodeCtx;

// One value of a finished import: its shape and, when folded, its values.
struct ValueRecord {
  Shape shape;
  std::optional<ConstTensor> constant;
};
using ImportRecord = absl::flat_hash_map<std::string, ValueRecord>;

// Where the batch is in a tensor of the second run: size[axis] == outer * B * inner.
struct BatchAxis {
  int axis = -1;      // -1: the tensor has no batch axis (its shape did not change)
  int64_t inner = 0;  // 0: unknown (the position inside the axis could not be followed)
};

// "export with dynamic axes or another tracing batch": the advice every error ends with.
std::string BakedBatchAdvice(int64_t old_batch);

class BatchRewriter {
 public:
  BatchRewriter(ImportRecord reference, int64_t old_batch, int64_t new_batch)
      : reference_(std::move(reference)), old_batch_(old_batch), new_batch_(new_batch) {}

  int64_t old_batch() const { return old_batch_; }
  int64_t new_batch() const { return new_batch_; }

  // Graph inputs: the batch axis of a data input has inner factor 1.
  void RecordInput(Importer& im, const std::string& name);
  // Before `node` is folded or translated: the node with rewritten inputs (each input
  // replaced by a new constant value), nullopt when nothing changes, or an error when a
  // baked batch cannot be attributed.
  absl::StatusOr<std::optional<onnx::NodeProto>> Rewrite(Importer& im,
                                                         const onnx::NodeProto& node,
                                                         const std::string& node_name);
  // After `node` was converted: where the batch is in each of its outputs.
  void RecordOutputs(Importer& im, const onnx::NodeProto& node);

  // --- used by the rules (batch_rewrite_rules.cc) ---
  const ValueRecord* Reference(const std::string& name) const;
  BatchAxis Find(const std::string& name) const;
  void Set(const std::string& name, BatchAxis b) { batch_[name] = b; }
  // The batch axis a shape change reveals: the one axis that went from k*b0 to k*B.
  BatchAxis FromShapes(const Shape& reference, const Shape& now) const;

 private:
  ImportRecord reference_;
  int64_t old_batch_;
  int64_t new_batch_;
  absl::flat_hash_map<std::string, BatchAxis> batch_;
};

// --- the rules, one per op (batch_rewrite_rules.cc, batch_rewrite_expand.cc) ---
// Each returns the rewritten node or nullopt; `c` reads the node's inputs.
using RuleResult = absl::StatusOr<std::optional<onnx::NodeProto>>;
RuleResult RewriteReshape(BatchRewriter& r, NodeCtx& c);
RuleResult RewriteExpand(BatchRewriter& r, NodeCtx& c);
RuleResult RewriteSlice(BatchRewriter& r, NodeCtx& c);
RuleResult RewriteLstmStates(BatchRewriter& r, NodeCtx& c);
// Where the batch goes through a Reshape or Flatten from `in` (reference shape, batch axis)
// to the reference output shape `out`; nullopt when it cannot be attributed to one axis.
std::optional<BatchAxis> ReshapedBatch(const Shape& in, BatchAxis batch, const Shape& out,
                                       int64_t old_batch);
// "[4, 16, 8]"
std::string IntsString(const std::vector<int64_t>& v);
// `node` with input `input` renamed to `name`.
onnx::NodeProto WithInput(const onnx::NodeProto& node, int input, const std::string& name);
// Input `i` of the node in both runs, as integers: nullopt unless both are known constants.
struct IntsBoth {
  std::vector<int64_t> reference, now;
};
std::optional<IntsBoth> ConstIntsBoth(const BatchRewriter& r, const NodeCtx& c, int i);
// Defines a new value holding `value` for input `input` of `c`'s node; returns its name.
absl::StatusOr<std::string> DefineRewritten(BatchRewriter& r, NodeCtx& c, int input,
                                            ConstTensor value);

}  // namespace tessera::graph::onnx_import
