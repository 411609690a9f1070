#include "tessera/graph/op_attrs.h"

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

bool AttrsMatchKind(OpKind kind, const OpAttrs& attrs) {
  return DefaultAttrs(kind).index() == attrs.index();
}

}  // namespace tessera::graph
