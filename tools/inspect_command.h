// `tessera inspect MODEL [--batch B] [--format table|json] [--inputs NAMES]`:
// per-op estimates (name, op, output shape, params, forward FLOPs, activation
// bytes) and totals.
//
//   std::ostringstream out, err;
//   int code = RunInspect({"zoo:alexnet", "--format", "json"}, out, err);
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/graph.h"

namespace tessera::tools {

// Runs the subcommand; `args` exclude "tessera inspect". Returns the exit code
// (0 ok, 1 model/input error, 2 usage error).
int RunInspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

std::string InspectTable(const graph::Graph& graph, const costmodel::GraphEstimate& estimate);
// {"model": {...contract...}, "totals": {...}, "ops": [{name, op, inputs, outputs,
//  output_shape, params, forward_flops, backward_flops, bytes_read, bytes_written,
//  activation_bytes}]}
nlohmann::json InspectJson(const graph::Graph& graph, const costmodel::GraphEstimate& estimate);

}  // namespace tessera::tools
