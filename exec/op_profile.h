// A model's ops timed on this machine, for the planner (costmodel/measured_cost_model.h): the graph
// at one device's batch shard (the global batch over `devices`) runs a few training steps with
// the CPU kernels, as the data-parallel workers run them (every device's shard at once, each on
// its own threads), and each node's forward and backward kernel is timed (TrainingProgram's
// on_node_timed hook); the median over the timed steps of every device is kept, which resists
// the odd preemption. Per byte of parameters, two more things are timed after each step: the
// optimizer's update (MeasuredOpTimes::update; Adam reads and writes seven values per
// parameter, which the roofline of one elementwise class prices at under half its time here)
// and the copy of the gradients into one buffer, as a fused gradient bucket is filled
// (MeasuredOpTimes::bucket_copy_s_per_byte).
//
//   TS_ASSIGN_OR_RETURN(costmodel::MeasuredOpTimes m,
//                       ProfileOps(graph, {.devices = 2, .threads = 1}));
//   costmodel::MeasuredCostModel cost(roofline, std::move(m));   // what the planner is given
//
// The times are wall seconds of this process's kernels with the machine as it is: profile on
// an otherwise idle machine, as `tessera calibrate` is run.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "tessera/exec/optimizer.h"
#include "tessera/graph/graph.h"
#include "tessera/costmodel/measured_cost_model.h"

namespace tessera::exec {

struct OpProfileOptions {
  int devices = 1;       // the global batch is split over this many
  int threads = 1;       // intra-op threads of one device
  int warmup_steps = 2;  // untimed steps first (arena pages, OpenBLAS buffers)
  int steps = 5;         // timed steps
  uint64_t seed = 1;     // parameters and random data
  // Every device's shard runs at once on its own thread (`devices` x `threads` threads), as
  // training on this machine runs them; false: one device alone.
  bool concurrent = true;
  OptimizerOptions optimizer;  // the update timed after each step (training's own)
};

// InvalidArgument when the graph's batch does not divide over `devices`, or steps < 1; the
// training program's errors (an op without a CPU kernel) as they are.
absl::StatusOr<costmodel::MeasuredOpTimes> ProfileOps(const graph::Graph& graph,
                                                        const OpProfileOptions& options);

}  // namespace tessera::exec
