#include "tessera/graph/op_attrs.h"

#include <algorithm>

namespace tessera::graph {

OpAttrs DefaultAttrs(OpKind kind) {
  switch (kind) {
    case OpKind::kConv: return ConvAttrs{};
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: return PoolAttrs{};
    case OpKind::kGemm: return GemmAttrs{};
    case OpKind::kLstm: return LstmAttrs{};
    case OpKind::kBatchNorm: return BatchNormAttrs{};
    case OpKind::kLayerNorm: return LayerNormAttrs{};
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax:
    case OpKind::kFlatten:
    case OpKind::kConcat:
    case OpKind::kGather: return AxisAttrs{};
    case OpKind::kReduceMean:
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze: return AxesAttrs{};
    case OpKind::kReshape: return ReshapeAttrs{};
    case OpKind::kTranspose: return PermAttrs{};
    case OpKind::kExpand: return ExpandAttrs{};
    case OpKind::kSlice: return SliceAttrs{};
    case OpKind::kSplit: return SplitAttrs{};
    case OpKind::kPad: return PadAttrs{};
    case OpKind::kClip:
    case OpKind::kLeakyRelu:
    case OpKind::kDropout: return ScalarAttrs{};
    case OpKind::kCast: return CastAttrs{};
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kCtcLoss: return LossAttrs{};
    default: return std::monostate{};
  }
}

std::vector<int64_t> ConvKernelShape(const ConvAttrs& conv, const std::vector<int64_t>& w) {
  if (!conv.kernel_shape.empty()) return conv.kernel_shape;
  return std::vector<int64_t>(w.begin() + std::min<size_t>(2, w.size()), w.end());
}

bool AttrsMatchKind(OpKind kind, const OpAttrs& attrs) {
  return DefaultAttrs(kind).index() == attrs.index();
}

}  // namespace tessera::graph
