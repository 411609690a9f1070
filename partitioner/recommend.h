// How many devices of which cluster to train on: plans the model for every
// cluster and device count, predicts time to train and cost, and picks one
// (the logic of `tessera recommend`, docs/plan-format.md).
//
//   RecommendOptions o{.samples = 1'281'167, .epochs = 90, .max_hours = 24,
//                      .batch_per_device = 32};
//   auto plan_fn = [&](const ClusterSpec& c, int devices, int64_t batch) -> StatusOr<Plan> {
//     ...build the graph at `batch`, PlanModel(graph, c, RooflineCostModel(c), {devices})...
//   };
//   TS_ASSIGN_OR_RETURN(Recommendation r, Recommend({v100, h100}, o, plan_fn));
//   std::cout << RecommendTable(r);   // or RecommendJson(r).dump(2)
//
// Device counts are the powers of two from 1 to max_devices plus the node size
// times every power of two (so nodes are always filled), deduplicated and sorted.
// Each count is planned at a global batch of batch_per_device x devices (weak
// scaling). The choice, among the options whose plan fits in memory:
//   - --max-hours given: the cheapest that finishes in time (also within
//     --max-cost when given); ties go to the faster;
//   - only --max-cost given: the fastest within the budget; ties go to the cheaper;
//   - neither: the cheapest; ties go to the faster.
// No option meeting the limits gives no choice and an explanation naming the
// closest option.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

struct RecommendOptions {
  int64_t samples = 0;  // training samples per epoch (>= 1)
  double epochs = 1;    // > 0
  double max_hours = 0; // deadline; 0: none
  double max_cost = 0;  // budget in USD; 0: none
  int64_t batch_per_device = 1;
  int max_devices = 1024;
};

// One (cluster, device count) option.
struct RecommendOption {
  std::string cluster;
  int devices = 0;
  int nodes = 0;
  int64_t global_batch = 0;
  double price_per_device_hour = 0;
  bool planned = false;  // false: planning failed, `note` says why
  bool fits = false;
  double step_time_s = 0;
  double samples_per_s = 0;
  double hours = 0;     // samples * epochs / samples_per_s / 3600
  double cost_usd = 0;  // hours * devices * price_per_device_hour
  // Why it was not planned (the planner's message) or does not fit ("does not fit: needs 20.7 GiB
  // per device, has 12 GiB"); empty otherwise.
  std::string note;
};

struct Recommendation {
  RecommendOptions options_used;
  std::vector<RecommendOption> options;
  int choice = -1;          // index into options; -1: none meets the limits
  std::string rule;         // "cheapest finishing within 24 h", ...
  std::string explanation;  // one line: the choice, or why there is none
};

// Plans `graph at global_batch` for `cluster` (already cluster.WithDevices(devices)). A plan that
// does not fit should come back with memory.fits false (PlanOptions::allow_over_capacity) so the
// option's note can say by how much; errors are recorded in the option.
using PlanAtFn = std::function<absl::StatusOr<Plan>(const costmodel::ClusterSpec& cluster,
                                                    int devices, int64_t global_batch)>;

std::vector<int> RecommendDeviceCounts(int devices_per_node, int max_devices);

// InvalidArgument for samples < 1, epochs <= 0, negative limits, batch_per_device < 1,
// max_devices < 1 or no clusters.
absl::StatusOr<Recommendation> Recommend(const std::vector<costmodel::ClusterSpec>& clusters,
                                         const RecommendOptions& options, const PlanAtFn& plan_at);

// Picks the option by the rules above (sets choice, rule, explanation).
void ChooseOption(Recommendation& r);

// The table of every option (the choice marked with '*'), then numbered notes: why an option was
// not planned or does not fit (one note for the rows of a cluster in a row that share it), then
// the choice. Within 100 columns for the presets' figures.
std::string RecommendTable(const Recommendation& r);
// {"options": [{cluster, devices, nodes, global_batch, price_per_device_hour, planned,
//  fits, step_time_s, samples_per_s, hours, cost_usd, note}], "choice": {...} | null,
//  "rule": str, "explanation": str, "samples": int, "epochs": number, ...}
nlohmann::json RecommendJson(const Recommendation& r);

}  // namespace tessera::partitioner
