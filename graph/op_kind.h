// The op catalogue. Names follow ONNX where ONNX has the op.
//
//   OpKind k = OpKind::kConv;
//   OpName(k);                         // "Conv"
//   GetOpSchema(k).op_class;           // OpClass::kDense
//   ParseOpKind("LSTM");               // OpKind::kLstm
//
// Input slots of each op (optional ones marked ?, absent optional inputs are
// kNoTensor in Node::inputs):
//   Conv(X, W, B?)           W: [Cout, Cin/groups, k...]; N-d spatial
//   Gemm(A, B, C?)           Y = alpha * op(A) op(B) + beta * C
//   MatMul(A, B)             numpy matmul with batch broadcasting
//   Embedding(ids, W)        W: [vocab, dim]; Y = ids.shape + [dim]
//   LSTM(X, W, R, B?, seq_lens?, h0?, c0?) -> (Y, Y_h, Y_c); ONNX layout and gate order
//   BatchNormalization(X, scale, bias, running_mean, running_var)
//   LayerNormalization(X, scale, bias?)
//   Where(cond, X, Y); Gather(data, indices)
//   SoftmaxCrossEntropy(logits[N,C,...], labels[N,...]) -> scalar (mean) loss
//   CtcLoss(log_probs[T,N,C], targets[N,S], input_lengths[N], target_lengths[N]) -> scalar
#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::graph {

// X(enum, name, min_inputs, max_inputs, outputs (-1: from attributes), class)
#define TESSERA_OP_LIST(X)                                        \
  X(Conv, "Conv", 2, 3, 1, kDense)                                \
  X(Gemm, "Gemm", 2, 3, 1, kDense)                                \
  X(MatMul, "MatMul", 2, 2, 1, kDense)                            \
  X(Embedding, "Embedding", 2, 2, 1, kEmbedding)                  \
  X(Lstm, "LSTM", 3, 7, 3, kRecurrent)                            \
  X(BatchNorm, "BatchNormalization", 5, 5, 1, kNormalization)     \
  X(LayerNorm, "LayerNormalization", 2, 3, 1, kNormalization)     \
  X(MaxPool, "MaxPool", 1, 1, 1, kPooling)                        \
  X(AveragePool, "AveragePool", 1, 1, 1, kPooling)                \
  X(GlobalAveragePool, "GlobalAveragePool", 1, 1, 1, kPooling)    \
  X(Relu, "Relu", 1, 1, 1, kElementwise)                          \
  X(LeakyRelu, "LeakyRelu", 1, 1, 1, kElementwise)                \
  X(Sigmoid, "Sigmoid", 1, 1, 1, kElementwise)                    \
  X(Tanh, "Tanh", 1, 1, 1, kElementwise)                          \
  X(Gelu, "Gelu", 1, 1, 1, kElementwise)                          \
  X(Erf, "Erf", 1, 1, 1, kElementwise)                            \
  X(Sqrt, "Sqrt", 1, 1, 1, kElementwise)                          \
  X(Exp, "Exp", 1, 1, 1, kElementwise)                            \
  X(Log, "Log", 1, 1, 1, kElementwise)                            \
  X(Neg, "Neg", 1, 1, 1, kElementwise)                            \
  X(Reciprocal, "Reciprocal", 1, 1, 1, kElementwise)              \
  X(Abs, "Abs", 1, 1, 1, kElementwise)                            \
  X(Clip, "Clip", 1, 1, 1, kElementwise)                          \
  X(Dropout, "Dropout", 1, 1, 1, kElementwise)                    \
  X(Identity, "Identity", 1, 1, 1, kLayout)                       \
  X(Cast, "Cast", 1, 1, 1, kElementwise)                          \
  X(Add, "Add", 2, 2, 1, kElementwise)                            \
  X(Sub, "Sub", 2, 2, 1, kElementwise)                            \
  X(Mul, "Mul", 2, 2, 1, kElementwise)                            \
  X(Div, "Div", 2, 2, 1, kElementwise)                            \
  X(Pow, "Pow", 2, 2, 1, kElementwise)                            \
  X(Where, "Where", 3, 3, 1, kElementwise)                        \
  X(ReduceMean, "ReduceMean", 1, 1, 1, kReduction)                \
  X(ReduceSum, "ReduceSum", 1, 1, 1, kReduction)                  \
  X(ReduceMax, "ReduceMax", 1, 1, 1, kReduction)                  \
  X(Softmax, "Softmax", 1, 1, 1, kSoftmax)                        \
  X(LogSoftmax, "LogSoftmax", 1, 1, 1, kSoftmax)                  \
  X(Reshape, "Reshape", 1, 1, 1, kLayout)                         \
  X(Transpose, "Transpose", 1, 1, 1, kLayout)                     \
  X(Flatten, "Flatten", 1, 1, 1, kLayout)                         \
  X(Concat, "Concat", 1, 1 << 20, 1, kLayout)                     \
  X(Split, "Split", 1, 1, -1, kLayout)                            \
  X(Slice, "Slice", 1, 1, 1, kLayout)                             \
  X(Squeeze, "Squeeze", 1, 1, 1, kLayout)                         \
  X(Unsqueeze, "Unsqueeze", 1, 1, 1, kLayout)                     \
  X(Gather, "Gather", 2, 2, 1, kLayout)                           \
  X(Expand, "Expand", 1, 1, 1, kLayout)                           \
  X(Pad, "Pad", 1, 1, 1, kLayout)                                 \
  X(SoftmaxCrossEntropy, "SoftmaxCrossEntropy", 2, 2, 1, kLoss)   \
  X(CtcLoss, "CtcLoss", 4, 4, 1, kLoss)

enum class OpKind : uint16_t {
#define TESSERA_OP_ENUM(e, n, lo, hi, out, cls) k##e,
  TESSERA_OP_LIST(TESSERA_OP_ENUM)
#undef TESSERA_OP_ENUM
};

// Broad families, used by cost estimates and by the partitioner.
enum class OpClass : uint8_t {
  kDense,          // convolutions and matrix products: weights, many FLOPs
  kEmbedding,      // table look-ups: many parameters, no FLOPs
  kRecurrent,      // LSTM cells
  kNormalization,  // batch and layer norm
  kPooling,
  kElementwise,
  kReduction,
  kSoftmax,
  kLayout,         // reshape family: moves no arithmetic
  kLoss,
};

struct OpSchema {
  OpKind kind;
  absl::string_view name;
  int min_inputs;
  int max_inputs;
  int num_outputs;  // -1: decided by the node's attributes (Split)
  OpClass op_class;
};

const OpSchema& GetOpSchema(OpKind kind);
absl::string_view OpName(OpKind kind);
absl::string_view OpClassName(OpClass op_class);
absl::StatusOr<OpKind> ParseOpKind(absl::string_view name);
// Every op kind, in catalogue order.
const std::vector<OpKind>& AllOpKinds();

}  // namespace tessera::graph
