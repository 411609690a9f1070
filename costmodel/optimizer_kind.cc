// Optimizer names and state sizes (optimizer_kind.h).
#include "tessera/costmodel/optimizer_kind.h"

#include "absl/strings/str_cat.h"

namespace tessera::costmodel {

absl::string_view OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdam: return "adam";
  }
  return "unknown";
}

absl::StatusOr<OptimizerKind> ParseOptimizerKind(absl::string_view name) {
  for (OptimizerKind k : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam}) {
    if (OptimizerName(k) == name) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", name, "'; expected sgd, momentum or adam"));
}

int OptimizerStateSlots(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return 0;
    case OptimizerKind::kMomentum: return 1;
    case OptimizerKind::kAdam: return 2;
  }
  return 0;
}

}  // namespace tessera::costmodel
