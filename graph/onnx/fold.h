// Internal to ONNX import: constant folding. A node whose present inputs are all
// known constants and whose op has a folding rule is evaluated at import time
// and emits no IR node; Shape and Size fold whenever their input's shape is
// known, which in Tessera is always.
//
//   if (IsFoldable(node.op_type())) {
//     TS_ASSIGN_OR_RETURN(bool folded, TryFold(ctx));   // outputs set when true
//   }
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/graph/onnx/const_tensor.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {

// Ops with a folding rule.
bool IsFoldable(absl::string_view op_type);
// Ops that exist only as folding rules: a node of such an op whose inputs are
// not all constants is unsupported (e.g. Range over data, Greater on activations).
bool IsFoldOnly(absl::string_view op_type);
// Folds the node when its inputs allow; false when it must become an IR node
// (inputs not all constant, or a result above kMaxFoldElements).
absl::StatusOr<bool> TryFold(NodeCtx& c);

// Tile on a constant (translate_tile.cc, which also translates it to IR).
absl::StatusOr<bool> FoldTileNode(NodeCtx& c);

// --- folding kernels (fold_math.cc, fold_layout.cc) ---
enum class BinaryFn { kAdd, kSub, kMul, kDiv, kPow, kMod, kFMod, kMin, kMax, kEqual, kLess,
                      kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };
enum class UnaryFn { kNeg, kAbs, kSqrt, kReciprocal, kFloor, kCeil, kExp, kLog, kNot, kRelu };

// nullopt: the result would exceed kMaxFoldElements.
absl::StatusOr<std::optional<ConstTensor>> FoldBinary(const ConstTensor& a, const ConstTensor& b,
                                                      BinaryFn fn);
ConstTensor FoldUnary(const ConstTensor& a, UnaryFn fn);
absl::StatusOr<std::optional<ConstTensor>> FoldWhere(const ConstTensor& cond, const ConstTensor& x,
                                                     const ConstTensor& y);
absl::StatusOr<std::optional<ConstTensor>> FoldRange(const ConstTensor& start,
                                                     const ConstTensor& limit,
                                                     const ConstTensor& delta);

// FoldGather and FoldConcat return ResourceExhausted when the result would exceed
// kMaxFoldElements (the node then stays an IR node).
// Values unchanged, new shape (Reshape, Squeeze, Unsqueeze, Flatten).
ConstTensor WithShape(ConstTensor t, Shape shape);
absl::StatusOr<ConstTensor> FoldGather(const ConstTensor& data, const ConstTensor& indices,
                                       int64_t axis);
ConstTensor FoldSlice(const ConstTensor& data, const Shape& out_shape,
                      const std::vector<int64_t>& starts, const std::vector<int64_t>& steps);
absl::StatusOr<ConstTensor> FoldConcat(const std::vector<const ConstTensor*>& parts, int64_t axis);
std::optional<ConstTensor> FoldExpand(const ConstTensor& data, const Shape& shape);
ConstTensor FoldTranspose(const ConstTensor& data, const std::vector<int64_t>& perm);
// A ReduceSum/ReduceProd/ReduceMax/ReduceMin/ReduceMean over `axes` (normalized).
ConstTensor FoldReduce(const ConstTensor& data, const std::vector<bool>& reduced, bool keepdims,
                       absl::string_view op_type);

}  // namespace tessera::graph::onnx_import
