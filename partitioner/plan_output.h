// Writing a Plan in the formats of `tessera plan` (docs/plan-format.md):
// the plan-file JSON of DESIGN.md, a readable table, a self-contained HTML
// report and a Chrome trace of one predicted step.
//
//   TS_ASSIGN_OR_RETURN(Plan plan, PlanModel(graph, cluster, cost, options));
//   std::cout << PlanTable(plan);
//   std::string json = PlanToJson(plan).dump(2);     // the plan-file contract
//   std::string html = PlanHtml(plan, cluster);       // inline CSS + SVG, no scripts
//   std::string trace = PlanTrace(plan).dump();       // opens in Perfetto / chrome://tracing
//
// Every function is a pure function of its arguments.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tessera/costmodel/cluster.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

// {"model", "cluster", "planner", "layers", "predicted", "memory", "baselines"}: every
// field of the contract plus reason/memory_bytes per layer, the memory breakdown
// and each baseline's speed-up.
nlohmann::json PlanToJson(const Plan& plan);

// Per layer: strategy and why, compute and comm time, bytes moved, memory; then the
// prediction, memory per device and the baselines with the speed-up over each.
std::string PlanTable(const Plan& plan);

// One HTML page: the cluster's figures, strategy per layer, memory per device (stacked
// parameters, gradients, optimizer state, activations, ...) against capacity and the
// step-time breakdown against the baselines (SVG); all text HTML-escaped, integers with
// thousands separators. `cluster` is the one the plan was made for (PlanModel's, sized by
// WithDevices): the plan records only its name, device and node counts.
std::string PlanHtml(const Plan& plan, const costmodel::ClusterSpec& cluster);

// Chrome trace-event JSON of plan.timeline: {"traceEvents": [...], "displayTimeUnit": "ms"},
// one complete ("X") event per span (microseconds), pid = device, tid = lane, with
// process/thread-name metadata events.
nlohmann::json PlanTrace(const Plan& plan);

}  // namespace tessera::partitioner
