// Reading a plan file back: the strategy (and output layout) of every layer of a `tessera plan
// --format json` file, so a run can follow a plan made (and perhaps edited) earlier (`tessera
// train --strategy PLAN.json`; PlannerKind::kGiven).
//
//   TS_ASSIGN_OR_RETURN(PlanFileStrategies f, ReadPlanStrategies("plan.json"));
//   options.planner = PlannerKind::kGiven;  options.strategies = f.strategies;
//   options.output_layouts = f.output_layouts;
//   options.bucket_bytes = f.bucket_bytes;  options.first_bucket_bytes = f.first_bucket_bytes;
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
  // "layers": [{"name", "layouts": {"output"}}]: which of a layer's options with that strategy
  // the plan chose (two may share one). Only the layers that record it: older plan files
  // have no "layouts", and their layers take the first option of their strategy.
  std::map<std::string, Layout> output_layouts;
  // "gradient_buckets": {"first_bucket_bytes", "bucket_bytes"}: the sizes the plan's run used,
  // for PlanOptions (the run then uses them as given). 0 where the file has no
  // "gradient_buckets" (older files): the planner chooses them.
  int64_t first_bucket_bytes = 0, bucket_bytes = 0;
};

// InvalidArgument naming the file and the field for text that is not JSON, lacks the layers,
// names a layer twice, or has an unknown strategy, or a "layouts" that is not an object or
// an "output" that is not a layout name (naming the layer and the value), or a
// "gradient_buckets" that is not an object of two sizes from 1 byte to 1 TiB.
absl::StatusOr<PlanFileStrategies> ParsePlanStrategies(absl::string_view text,
                                                       absl::string_view source_name);
absl::StatusOr<PlanFileStrategies> ReadPlanStrategies(const std::string& path);

}  // namespace tessera::partitioner
