// Tensors and nodes of a graph. The graph owns both; everything else refers to
// them by id.
//
//   Tensor w{.name = "fc.weight", .shape = {1000, 4096}, .role = TensorRole::kParameter};
//   Node n{.name = "fc", .kind = OpKind::kGemm, .inputs = {x, w, b}, .outputs = {y},
//          .attrs = GemmAttrs{.trans_b = true}};
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "tessera/graph/dtype.h"
#include "tessera/graph/op_attrs.h"
#include "tessera/graph/op_kind.h"
#include "tessera/graph/shape.h"

namespace tessera::graph {

using TensorId = int32_t;
using NodeId = int32_t;
inline constexpr TensorId kNoTensor = -1;
inline constexpr NodeId kNoNode = -1;

enum class TensorRole : uint8_t {
  kInput,       // data fed each step (images, tokens, labels)
  kParameter,   // trainable weight
  kActivation,  // produced by a node
  kConstant,    // fixed values and non-trained state (e.g. batch-norm running stats)
};

absl::string_view TensorRoleName(TensorRole role);

struct Tensor {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  TensorRole role = TensorRole::kActivation;
  NodeId producer = kNoNode;  // set by Graph::AddNode for activations
  // Data inputs: the axis that holds the batch (0 unless the model is
  // sequence-first, e.g. ONNX token inputs [T, B]). Ignored for other roles.
  int32_t batch_axis = 0;
  // Values of a small constant when known (row-major), e.g. gather indices or a
  // scalar divisor; empty otherwise.
  std::vector<double> data;
};

struct Node {
  std::string name;
  OpKind kind = OpKind::kIdentity;
  std::vector<TensorId> inputs;   // kNoTensor marks an absent optional input
  std::vector<TensorId> outputs;
  OpAttrs attrs;
};

}  // namespace tessera::graph
