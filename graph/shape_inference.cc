#include "tessera/graph/shape_inference.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/infer/infer_impl.h"

namespace tessera::graph {
namespace infer {

absl::Status InferContext::Error(absl::string_view expected) const {
  std::vector<std::string> ins;
  for (int i = 0; i < num_inputs(); ++i) {
    if (!has_input(i)) {
      ins.push_back("(absent)");
      continue;
    }
    const Tensor& t = input(i);
    ins.push_back(absl::StrCat("'", t.name, "' ", ShapeString(t.shape), " ", DTypeName(t.dtype)));
  }
  return absl::InvalidArgumentError(absl::StrCat("node '", node_.name, "' (", OpName(node_.kind),
                                                 ") with inputs ", absl::StrJoin(ins, ", "), ": ",
                                                 expected));
}

int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                     int64_t pad_end, int64_t dilation, bool ceil_mode) {
  // 128-bit arithmetic: pads, strides and dilations come from files and may be
  // huge; a result beyond int64 saturates (and fails the output size check).
  const __int128 span = static_cast<__int128>(dilation) * (kernel - 1) + 1;
  const __int128 room = static_cast<__int128>(in) + pad_begin + pad_end - span;
  if (room < 0 || stride <= 0) return 0;
  __int128 out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // ONNX/PyTorch: with ceil_mode the last window must start inside the input
  // or the left padding.
  if (ceil_mode && (out - 1) * stride >= static_cast<__int128>(in) + pad_begin) --out;
  return out > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                   : static_cast<int64_t>(out);
}

namespace {

Result Dispatch(const InferContext& c) {
  switch (c.node().kind) {
    case OpKind::kConv: return InferConv(c);
    case OpKind::kGemm: return InferGemm(c);
    case OpKind::kMatMul: return InferMatMul(c);
    case OpKind::kEmbedding: return InferEmbedding(c);
    case OpKind::kLstm: return InferLstm(c);
    case OpKind::kBatchNorm: return InferBatchNorm(c);
    case OpKind::kLayerNorm: return InferLayerNorm(c);
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: return InferPool(c);
    case OpKind::kGlobalAveragePool: return InferGlobalPool(c);
    case OpKind::kCast: return InferCast(c);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow: return InferBinary(c);
    case OpKind::kWhere: return InferWhere(c);
    case OpKind::kReduceMean:
    case OpKind::kReduceSum:
    case OpKind::kReduceMax: return InferReduce(c);
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax: return InferSoftmax(c);
    case OpKind::kReshape: return InferReshape(c);
    case OpKind::kTranspose: return InferTranspose(c);
    case OpKind::kFlatten: return InferFlatten(c);
    case OpKind::kConcat: return InferConcat(c);
    case OpKind::kSplit: return InferSplit(c);
    case OpKind::kSlice: return InferSlice(c);
    case OpKind::kSqueeze: return InferSqueeze(c);
    case OpKind::kUnsqueeze: return InferUnsqueeze(c);
    case OpKind::kGather: return InferGather(c);
    case OpKind::kExpand: return InferExpand(c);
    case OpKind::kPad: return InferPad(c);
    case OpKind::kSoftmaxCrossEntropy: return InferSoftmaxCrossEntropy(c);
    case OpKind::kCtcLoss: return InferCtcLoss(c);
    default: return InferUnary(c);  // every remaining op maps X -> same shape
  }
}

}  // namespace
}  // namespace infer

absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const Graph& graph, const Node& node) {
  const OpSchema& schema = GetOpSchema(node.kind);
  const infer::InferContext context(graph, node);
  for (int i = 0; i < std::min<int>(schema.min_inputs, context.num_inputs()); ++i) {
    if (!context.has_input(i)) return context.Error(absl::StrCat("input ", i, " is required"));
  }
  if (!AttrsMatchKind(node.kind, node.attrs)) {
    return context.Error("attributes are of another op's type");
  }
  TS_ASSIGN_OR_RETURN(std::vector<TensorType> types, infer::Dispatch(context));
  if (types.size() != node.outputs.size()) {
    return context.Error(absl::StrCat("produces ", types.size(), " outputs but the node lists ",
                                      node.outputs.size()));
  }
  for (const TensorType& t : types) {
    for (int64_t d : t.shape) {
      if (d < 0) return context.Error(absl::StrCat("output shape ", ShapeString(t.shape),
                                                   " has a negative dimension"));
    }
    int64_t bytes = 0;
    if (NumElements(t.shape) == std::numeric_limits<int64_t>::max() ||
        __builtin_mul_overflow(NumElements(t.shape), DTypeSize(t.dtype), &bytes)) {
      return context.Error(absl::StrCat("output shape ", ShapeString(t.shape),
                                        " is too large (its byte size overflows 64 bits)"));
    }
  }
  return types;
}

absl::Status InferShapes(Graph& graph) {
  TS_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  for (NodeId id : order) {
    const Node& node = graph.node(id);
    TS_ASSIGN_OR_RETURN(std::vector<TensorType> types, InferOutputTypes(graph, node));
    for (size_t i = 0; i < types.size(); ++i) {
      Tensor& out = graph.mutable_tensor(node.outputs[i]);
      out.shape = std::move(types[i].shape);
      out.dtype = types[i].dtype;
    }
  }
  return absl::OkStatus();
}

}  // namespace tessera::graph
