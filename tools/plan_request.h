// What `tessera plan` and `tessera memory MODEL` share: the options that name a model, a
// cluster and how to plan it, and the planning itself.
//
//   PlanRequest r{.cluster = "v100-vpc32", .devices = 1};
//   AddPlanRequestOptions(parser, r, {.devices = "devices to plan for"});
//   AddOnnxInputOptions(parser, &r.inputs, &r.dims);            // model_loader.h
//   ... parse; dims = ParseDims(r.dims) ...
//   TS_ASSIGN_OR_RETURN(PlannedModel m, PlanRequestedModel(r, *dims));
//   m.plan, m.graph, m.cluster
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/plan.h"
#include "tessera/tools/cli/arg_parser.h"

namespace tessera::tools {

struct PlanRequest {
  std::string model, cluster, optimizer = "sgd", strategy = "auto";
  int64_t devices = 0, batch = 0;
  // Gradient bucket sizes (partitioner::PlanOptions): 0, the default, lets the planner choose.
  int64_t bucket_bytes = 0, first_bucket_bytes = 0;
  bool executable = false;  // plan only what the hybrid runtime runs (`tessera train`)
  std::vector<std::string> inputs, dims;  // ONNX data inputs, NAME=N symbolic dimensions
};

// Help texts that differ between the commands.
struct PlanRequestHelp {
  std::string devices, cluster, strategy;
};

// MODEL, --devices N, --cluster NAME|FILE, --batch B, --optimizer, --strategy, --bucket-size,
// --first-bucket-size.
void AddPlanRequestOptions(ArgParser& p, PlanRequest& r, const PlanRequestHelp& help);
// --bucket-size SIZE and --first-bucket-size SIZE (also `tessera train`'s).
void AddBucketSizeOptions(ArgParser& p, int64_t* bucket_bytes, int64_t* first_bucket_bytes);

struct PlannedModel {
  graph::Graph graph;
  partitioner::Plan plan;
  costmodel::OptimizerKind optimizer = costmodel::OptimizerKind::kSgd;
  costmodel::ClusterSpec cluster;  // the cluster planned for, sized to the request's devices
};

// Loads the cluster and the model, checks that the batch divides over the devices (an error
// naming both otherwise), and plans with the roofline cost model of the sized cluster.
absl::StatusOr<PlannedModel> PlanRequestedModel(
    const PlanRequest& r, const absl::flat_hash_map<std::string, int64_t>& dims);

}  // namespace tessera::tools
