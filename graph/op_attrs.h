// Typed attributes of ops. A node holds one alternative of OpAttrs; which one
// belongs to which op is fixed (see AttrsMatchKind), so there is no attribute bag.
//
//   Node n;
//   n.kind = OpKind::kConv;
//   n.attrs = ConvAttrs{.kernel_shape = {3, 3}, .strides = {1, 1}, .pads = {1, 1, 1, 1}};
//   const auto& conv = std::get<ConvAttrs>(n.attrs);
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "tessera/graph/dtype.h"
#include "tessera/graph/op_kind.h"

namespace tessera::graph {

// Conv. Empty strides/pads/dilations mean 1s/0s/1s. pads: all begins, then all ends.
struct ConvAttrs {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  std::vector<int64_t> dilations;
  int64_t groups = 1;
  bool operator==(const ConvAttrs&) const = default;
};

// MaxPool / AveragePool.
struct PoolAttrs {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  bool ceil_mode = false;
  bool count_include_pad = false;
  bool operator==(const PoolAttrs&) const = default;
};

struct GemmAttrs {
  bool trans_a = false;
  bool trans_b = false;
  double alpha = 1.0;
  double beta = 1.0;
  bool operator==(const GemmAttrs&) const = default;
};

enum class LstmDirection : uint8_t { kForward, kReverse, kBidirectional };

// ONNX LSTM: layout 0 is sequence-first X[T,B,I], Y[T,dirs,B,H]; layout 1 is
// batch-first X[B,T,I], Y[B,T,dirs,H]. Gate order i, o, f, c.
struct LstmAttrs {
  int64_t hidden_size = 0;
  LstmDirection direction = LstmDirection::kForward;
  int64_t layout = 0;
  bool operator==(const LstmAttrs&) const = default;
};

struct BatchNormAttrs {
  double epsilon = 1e-5;
  double momentum = 0.9;
  bool operator==(const BatchNormAttrs&) const = default;
};

// Normalizes over dimensions [axis, rank).
struct LayerNormAttrs {
  int64_t axis = -1;
  double epsilon = 1e-5;
  bool operator==(const LayerNormAttrs&) const = default;
};

// Softmax, LogSoftmax, Flatten, Concat, Gather.
struct AxisAttrs {
  int64_t axis = 0;
  bool operator==(const AxisAttrs&) const = default;
};

// ReduceMean/Sum/Max (empty axes: all), Squeeze (empty: all 1-dims), Unsqueeze.
struct AxesAttrs {
  std::vector<int64_t> axes;
  bool keepdims = true;
  bool operator==(const AxesAttrs&) const = default;
};

// Reshape target: 0 copies the input dimension, one -1 is inferred.
struct ReshapeAttrs {
  std::vector<int64_t> shape;
  bool operator==(const ReshapeAttrs&) const = default;
};

// Transpose (empty perm: reverse), Expand (target shape, broadcast rules).
struct PermAttrs {
  std::vector<int64_t> perm;
  bool operator==(const PermAttrs&) const = default;
};

struct ExpandAttrs {
  std::vector<int64_t> shape;
  bool operator==(const ExpandAttrs&) const = default;
};

// ONNX Slice semantics; empty axes: 0..n-1, empty steps: 1s.
struct SliceAttrs {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> axes;
  std::vector<int64_t> steps;
  bool operator==(const SliceAttrs&) const = default;
};

struct SplitAttrs {
  int64_t axis = 0;
  std::vector<int64_t> sizes;  // one per output
  bool operator==(const SplitAttrs&) const = default;
};

enum class PadMode : uint8_t { kConstant, kReflect, kEdge };

struct PadAttrs {
  std::vector<int64_t> pads;  // all begins, then all ends
  PadMode mode = PadMode::kConstant;
  double value = 0.0;
  bool operator==(const PadAttrs&) const = default;
};

// Clip (min/max), LeakyRelu (alpha), Dropout (ratio): scalar parameters.
struct ScalarAttrs {
  double alpha = 0.0;
  double beta = 0.0;
  bool operator==(const ScalarAttrs&) const = default;
};

struct CastAttrs {
  DType to = DType::kF32;
  bool operator==(const CastAttrs&) const = default;
};

enum class Reduction : uint8_t { kMean, kSum, kNone };

// SoftmaxCrossEntropy; CtcLoss uses `blank`.
struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  int64_t blank = 0;
  int64_t ignore_index = -1;  // < 0: none
  bool operator==(const LossAttrs&) const = default;
};

using OpAttrs =
    std::variant<std::monostate, ConvAttrs, PoolAttrs, GemmAttrs, LstmAttrs, BatchNormAttrs,
                 LayerNormAttrs, AxisAttrs, AxesAttrs, ReshapeAttrs, PermAttrs, ExpandAttrs,
                 SliceAttrs, SplitAttrs, PadAttrs, ScalarAttrs, CastAttrs, LossAttrs>;

// The attribute alternative an op of this kind carries (an empty OpAttrs of the
// right alternative); ops without attributes carry std::monostate.
OpAttrs DefaultAttrs(OpKind kind);
// True when `attrs` holds the alternative DefaultAttrs(kind) holds.
bool AttrsMatchKind(OpKind kind, const OpAttrs& attrs);

// A convolution's kernel: `conv.kernel_shape`, or when that is empty (ONNX allows it) the
// spatial dimensions of its weight `w` [Cout, Cin/groups, k...].
std::vector<int64_t> ConvKernelShape(const ConvAttrs& conv, const std::vector<int64_t>& w);

}  // namespace tessera::graph
