// The "model" object of the plan-file contract (DESIGN.md), shared by
// `tessera inspect --format json` and `tessera plan --format json`.
//
//   nlohmann::json m = ModelSummaryJson(graph, costmodel::EstimateGraph(graph));
//   // {"name": "resnet50", "params": 25557032, "forward_flops": 2.6e11, "ops": 176, "batch": 32}
#pragma once

#include <nlohmann/json.hpp>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/graph.h"

namespace tessera::tools {

nlohmann::json ModelSummaryJson(const graph::Graph& graph, const costmodel::GraphEstimate& estimate);

}  // namespace tessera::tools
