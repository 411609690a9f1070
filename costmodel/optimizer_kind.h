// The optimizer a model trains with, as the planner prices it (state per parameter) and the
// runtime runs it (exec/optimizer.h): one enum and one parser for both.
//
//   TS_ASSIGN_OR_RETURN(OptimizerKind kind, ParseOptimizerKind("adam"));
//   OptimizerName(kind);          // "adam"
//   OptimizerStateSlots(kind);    // 2: Adam keeps m and v per parameter value
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::costmodel {

// The values are stored in checkpoints (exec/checkpoint.h): append, never reorder.
enum class OptimizerKind : uint8_t {
  kSgd,       // w -= lr (g + wd w)
  kMomentum,  // torch.optim.SGD with momentum
  kAdam,      // AdamW: decoupled weight decay
};

absl::string_view OptimizerName(OptimizerKind kind);  // "sgd", "momentum", "adam"
// InvalidArgument naming `name` and the known ones.
absl::StatusOr<OptimizerKind> ParseOptimizerKind(absl::string_view name);
// Optimizer state values kept per parameter value: 0, 1 (momentum's v) or 2 (Adam's m and v).
int OptimizerStateSlots(OptimizerKind kind);

}  // namespace tessera::costmodel
