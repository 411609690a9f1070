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
