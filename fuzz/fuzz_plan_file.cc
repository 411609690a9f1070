// libFuzzer target: the plan file reader (partitioner/plan_file.h ParsePlanStrategies) on
// arbitrary text. An accepted plan's strategies, output layouts and gradient bucket sizes are then
// given to the planner (PlannerKind::kGiven, as `tessera train --strategy PLAN.json` does) for
// the zoo's CPU-sized "nmt" model, whose layer names the seed corpus uses; the planner must
// accept them (keeping each given strategy, output layout and bucket size) or return a clean
// error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "tessera/base/check.h"
#include "tessera/fuzz/verbose.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/partitioner/planner.h"

namespace {

constexpr int64_t kBatch = 8;

const tessera::graph::Graph& Model() {
  static const tessera::graph::Graph* graph = [] {
    absl::StatusOr<tessera::graph::Graph> g = tessera::graph::zoo::BuildZooModel("nmt", kBatch);
    TS_CHECK(g.ok()) << g.status();
    return new tessera::graph::Graph(std::move(*g));
  }();
  return *graph;
}

void PlanWithGiven(const tessera::partitioner::PlanFileStrategies& file) {
  static const tessera::costmodel::ClusterSpec* cluster = [] {
    auto c = tessera::costmodel::ClusterPreset("v100-vpc32");
    TS_CHECK(c.ok()) << c.status();
    return new tessera::costmodel::ClusterSpec(*c);
  }();
  // The batch must divide over the devices: the file's count when it does, else 2.
  const int devices = file.devices >= 1 && file.devices <= kBatch && kBatch % file.devices == 0
                          ? file.devices
                          : 2;
  const tessera::costmodel::RooflineCostModel cost(cluster->WithDevices(devices));
  tessera::partitioner::PlanOptions options;
  options.devices = devices;
  options.planner = tessera::partitioner::PlannerKind::kGiven;
  options.strategies = file.strategies;
  options.output_layouts = file.output_layouts;
  options.bucket_bytes = file.bucket_bytes;
  options.first_bucket_bytes = file.first_bucket_bytes;
  options.memory_time_limit_s = 0.001;  // the arena search is not what is fuzzed here
  absl::StatusOr<tessera::partitioner::Plan> plan =
      tessera::partitioner::PlanModel(Model(), *cluster, cost, options);
  tessera::fuzz::Verbose(plan.status());
  if (!plan.ok()) return;  // a layer that is not in the model, or does not admit its strategy
  TS_CHECK(!plan->layers.empty()) << "a plan of the nmt model without layers";
  if (file.bucket_bytes > 0) {  // the file's sizes are the plan's, as given
    TS_CHECK(plan->buckets.bytes == file.bucket_bytes &&
             plan->buckets.first_bytes == file.first_bucket_bytes && !plan->buckets.tuned)
        << "the file's gradient buckets " << file.first_bucket_bytes << " + " << file.bucket_bytes
        << " were planned as " << plan->buckets.first_bytes << " + " << plan->buckets.bytes;
  }
  for (const auto& layer : plan->layers) {
    auto given = file.strategies.find(layer.name);
    if (given == file.strategies.end()) continue;
    TS_CHECK(layer.strategy == given->second)
        << "layer " << layer.name << " was given " << StrategyName(given->second)
        << " but planned " << StrategyName(layer.strategy);
    auto output = file.output_layouts.find(layer.name);
    if (output == file.output_layouts.end()) continue;
    TS_CHECK(layer.output_layout == output->second)
        << "layer " << layer.name << " was given output layout " << LayoutName(output->second)
        << " but planned " << LayoutName(layer.output_layout);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tessera::partitioner::PlanFileStrategies> file =
      tessera::partitioner::ParsePlanStrategies(text, "fuzz.json");
  tessera::fuzz::Verbose(file.status());
  if (!file.ok()) {
    TS_CHECK(absl::StartsWith(file.status().message(), "fuzz.json: "))
        << "error does not name the file: " << file.status();
    return 0;
  }
  PlanWithGiven(*file);
  return 0;
}
