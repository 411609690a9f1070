// Names and parsers of plan.h and planner.h enums.
#include "tessera/partitioner/plan.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tessera/partitioner/planner.h"

namespace tessera::partitioner {

absl::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kDataParallel: return "data_parallel";
    case Strategy::kModelParallel: return "model_parallel";
    case Strategy::kLateMultiply: return "late_multiply";
    case Strategy::kReplicated: return "replicated";
  }
  return "unknown";
}

absl::StatusOr<Strategy> ParseStrategy(absl::string_view name) {
  for (Strategy s : {Strategy::kDataParallel, Strategy::kModelParallel, Strategy::kLateMultiply,
                     Strategy::kReplicated}) {
    if (StrategyName(s) == name) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown strategy '", name,
      "'; expected data_parallel, model_parallel, late_multiply or replicated"));
}

absl::string_view OptimizerName(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kMomentum: return "momentum";
    case Optimizer::kAdam: return "adam";
  }
  return "unknown";
}

absl::StatusOr<Optimizer> ParseOptimizer(absl::string_view name) {
  for (Optimizer o : {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam}) {
    if (OptimizerName(o) == name) return o;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", name, "'; expected sgd, momentum or adam"));
}

int OptimizerStateFactor(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return 0;
    case Optimizer::kMomentum: return 1;
    case Optimizer::kAdam: return 2;
  }
  return 0;
}

absl::StatusOr<PlannerKind> ParsePlannerKind(absl::string_view name) {
  if (name == "auto") return PlannerKind::kAuto;
  if (name == "data") return PlannerKind::kData;
  if (name == "model") return PlannerKind::kModel;
  if (name == "optimal") return PlannerKind::kOptimal;
  if (name == "late") return PlannerKind::kLate;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown strategy '", name, "'; expected auto, data, model, late or optimal"));
}

}  // namespace tessera::partitioner
