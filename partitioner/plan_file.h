// Reading a plan file back: the strategy of every layer of a `tessera plan --format json` file,
// so a run can follow a plan made (and perhaps edited) earlier (`tessera train --strategy
// PLAN.json`; PlannerKind::kGiven).
//
//   TS_ASSIGN_OR_RETURN(PlanFileStrategies f, ReadPlanStrategies("plan.json"));
//   options.planner = PlannerKind::kGiven;  options.strategies = f.strategies;
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

struct PlanFileStrategies {
  std::string model;  // "model": {"name"}
  int devices = 0;    // "cluster": {"devices"}
  std::map<std::string, Strategy> strategies;  // "layers": [{"name", "strategy"}]
};

// InvalidArgument naming the file and the field for text that is not JSON, lacks the layers,
// names a layer twice, or has an unknown strategy.
absl::StatusOr<PlanFileStrategies> ParsePlanStrategies(absl::string_view text,
                                                       absl::string_view source_name);
absl::StatusOr<PlanFileStrategies> ReadPlanStrategies(const std::string& path);

}  // namespace tessera::partitioner
