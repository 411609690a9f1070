// Planning a model for a cluster: the entry point of `tessera plan`.
//
//   TS_ASSIGN_OR_RETURN(ClusterSpec cluster, costmodel::LoadCluster("v100-vpc32"));
//   costmodel::RooflineCostModel cost(cluster.WithDevices(64));
//   PlanOptions options{.devices = 64, .optimizer = costmodel::OptimizerKind::kAdam};
//   TS_ASSIGN_OR_RETURN(Plan plan, PlanModel(graph, cluster, cost, options));
//
// PlanModel is a pure function of its inputs. It plans with the chosen planner,
// shards layers until the plan fits device memory (memory-aware), chooses the gradient bucket
// sizes for the plan (unless given), and fills the data- and model-parallel baselines. When
// nothing fits it returns ResourceExhausted naming the smallest device count that would.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/cost_model.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

enum class PlannerKind : uint8_t {
  kAuto,     // the heuristic planner, then memory-aware sharding
  kData,     // every layer data-parallel
  kModel,    // every layer that can be model-parallel is
  kOptimal,  // the exact planner (dynamic programming), then memory-aware sharding
  kLate,     // every layer that can be late-multiply is (others as kModel's)
  kGiven,    // PlanOptions::strategies (and output_layouts) name layers' options (a plan file's)
};
// auto|data|model|optimal|late
absl::StatusOr<PlannerKind> ParsePlannerKind(absl::string_view name);

struct PlanOptions {
  int devices = 1;
  costmodel::OptimizerKind optimizer = costmodel::OptimizerKind::kSgd;
  PlannerKind planner = PlannerKind::kAuto;
  // Gradient bucket sizes (Plan::buckets): 0 lets the planner choose (bucket_tuning.h: the
  // fastest simulated step of the chosen plan); a size above 0 is kept as given.
  int64_t bucket_bytes = 0;        // every bucket but the first
  int64_t first_bucket_bytes = 0;  // bucket 0, launched first
  // The static offset planner's search for the final plan's activation arena: a budget of
  // iterations, so that the arena (and the plan file) is the same on every run and machine,
  // and a time limit that only a machine far slower than expected reaches first.
  int64_t memory_search_iterations = 4000;
  double memory_time_limit_s = 2.0;
  // Plan only what exec's hybrid runtime executes (ProblemOptions::executable): what
  // `tessera train` plans with, and `tessera plan --executable` shows.
  bool executable = false;
  // kGiven: the strategy of each layer, by name (plan_file.h reads them from a plan file);
  // layers not named choose greedily. InvalidArgument naming a layer that is not in the graph
  // or does not admit its strategy.
  std::map<std::string, Strategy> strategies;
  // kGiven: the layout each named layer leaves its output in (a plan file's layouts.output),
  // choosing between options that share a strategy; a layer without an entry takes the first
  // option of its strategy. Every entry's layer must be in `strategies` (InvalidArgument).
  std::map<std::string, Layout> output_layouts;
  // kAuto/kOptimal, when even the least-memory plan (every layer sharded) exceeds device memory:
  // false, ResourceExhausted naming the bytes needed and the smallest device count that fits
  // the batch; true, that plan with memory.fits false (`tessera recommend` lists it as an option
  // that does not fit).
  bool allow_over_capacity = false;
};

// `graph` has its shapes inferred at the global batch; the batch must divide
// evenly over `options.devices` (InvalidArgument otherwise). `cost` answers for
// `cluster.WithDevices(options.devices)`.
absl::StatusOr<Plan> PlanModel(const graph::Graph& graph, const costmodel::ClusterSpec& cluster,
                               const costmodel::CostModel& cost, const PlanOptions& options);

}  // namespace tessera::partitioner
