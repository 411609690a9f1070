#include "tessera/graph/op_kind.h"

#include <array>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"

namespace tessera::graph {
namespace {

constexpr OpSchema kSchemas[] = {
#define TESSERA_OP_SCHEMA(e, n, lo, hi, out, cls) \
  OpSchema{OpKind::k##e, n, lo, hi, out, OpClass::cls},
    TESSERA_OP_LIST(TESSERA_OP_SCHEMA)
#undef TESSERA_OP_SCHEMA
};

}  // namespace

const OpSchema& GetOpSchema(OpKind kind) {
  const auto index = static_cast<size_t>(kind);
  TS_CHECK(index < std::size(kSchemas)) << "op kind " << index;
  return kSchemas[index];
}

absl::string_view OpName(OpKind kind) { return GetOpSchema(kind).name; }

absl::string_view OpClassName(OpClass op_class) {
  switch (op_class) {
    case OpClass::kDense: return "dense";
    case OpClass::kEmbedding: return "embedding";
    case OpClass::kRecurrent: return "recurrent";
    case OpClass::kNormalization: return "normalization";
    case OpClass::kPooling: return "pooling";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kReduction: return "reduction";
    case OpClass::kSoftmax: return "softmax";
    case OpClass::kLayout: return "layout";
    case OpClass::kLoss: return "loss";
  }
  return "?";
}

absl::StatusOr<OpKind> ParseOpKind(absl::string_view name) {
  for (const OpSchema& s : kSchemas) {
    if (s.name == name) return s.kind;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown op '", name, "'"));
}

const std::vector<OpKind>& AllOpKinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> v;
    for (const OpSchema& s : kSchemas) v.push_back(s.kind);
    return v;
  }();
  return kinds;
}

}  // namespace tessera::graph
