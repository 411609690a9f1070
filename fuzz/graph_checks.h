// Checks the fuzz targets run on every graph a loader accepts (fuzz_onnx_import,
// fuzz_graph_json), so code past the loader sees the same hostile graphs a user's
// `tessera plan` would. A failed check aborts: libFuzzer reports it as a crash.
//
//   absl::StatusOr<Graph> g = GraphFromJson(text, "fuzz.json");
//   if (g.ok()) {
//     tessera::fuzz::CheckLoadedGraph(*g);
//     tessera::fuzz::PlanLoadedGraph(*g);
//   }
#pragma once

#include <string>

#include "tessera/base/check.h"
#include "tessera/fuzz/verbose.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/batch.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/shape_inference.h"
#include "tessera/partitioner/planner.h"

namespace tessera::fuzz {

// A loaded graph is valid, shape inference on it is a fixed point, it survives a
// round trip through the graph file unchanged, and the cost model can estimate it.
inline void CheckLoadedGraph(const graph::Graph& g) {
  const absl::Status valid = g.Validate();
  TS_CHECK(valid.ok()) << "a loaded graph does not validate: " << valid;
  const std::string text = graph::GraphToJson(g);

  graph::Graph again = g;
  const absl::Status inferred = graph::InferShapes(again);
  TS_CHECK(inferred.ok()) << "shape inference fails on a loaded graph: " << inferred;
  TS_CHECK(graph::GraphToJson(again) == text) << "shape inference changed a loaded graph";

  absl::StatusOr<graph::Graph> reloaded = graph::GraphFromJson(text, "roundtrip.json");
  TS_CHECK(reloaded.ok()) << "a loaded graph does not read back from its graph file: "
                          << reloaded.status();
  TS_CHECK(graph::GraphToJson(*reloaded) == text) << "the graph file round trip changed the graph";

  const costmodel::GraphEstimate e = costmodel::EstimateGraph(g);
  TS_CHECK(e.ops.size() == g.nodes().size()) << "one estimate per node";
  TS_CHECK(e.params >= 0 && e.activation_bytes >= 0 && e.bytes_read >= 0 && e.bytes_written >= 0)
      << "negative estimate: params " << e.params << ", activation bytes " << e.activation_bytes;
  TS_CHECK(!(e.flops_forward < 0) && !(e.flops_backward < 0)) << "negative FLOPs";
}

// Graphs up to this many nodes are also planned (bigger ones would slow the fuzzer down).
inline constexpr int kMaxPlannedNodes = 64;

// Plans a small loaded graph as `tessera plan` would, on 2 devices when its batch is even
// (else 1); the planner must plan it or return an error, never crash.
inline void PlanLoadedGraph(const graph::Graph& g) {
  if (g.num_nodes() > kMaxPlannedNodes) return;
  static const costmodel::ClusterSpec* cluster = [] {
    absl::StatusOr<costmodel::ClusterSpec> c = costmodel::ClusterPreset("v100-vpc32");
    TS_CHECK(c.ok()) << c.status();
    return new costmodel::ClusterSpec(*c);
  }();
  partitioner::PlanOptions options;
  options.devices = graph::GraphBatch(g) % 2 == 0 ? 2 : 1;
  options.memory_time_limit_s = 0.001;  // the arena search is not what is fuzzed here
  const costmodel::RooflineCostModel cost(cluster->WithDevices(options.devices));
  absl::StatusOr<partitioner::Plan> plan = partitioner::PlanModel(g, *cluster, cost, options);
  Verbose(plan.status());
  if (!plan.ok()) return;
  TS_CHECK(plan->devices == options.devices) << "planned for " << plan->devices << " devices";
  TS_CHECK(plan->predicted.step_time_s >= 0) << "step time " << plan->predicted.step_time_s;
}

}  // namespace tessera::fuzz
