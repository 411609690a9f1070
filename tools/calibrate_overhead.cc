// The framework's cost per op: a training step (exec::TrainingProgram) of a chain of tiny ops,
// whose kernels take next to nothing, divided by the OpTime calls the planner makes for it.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"
#include "tessera/tools/calibrate_measure.h"

namespace tessera::tools {
namespace {

constexpr int kChain = 64;  // tiny ops in the chain

// p [16] -> 64 x Tanh -> ReduceSum -> the loss.
absl::StatusOr<graph::Graph> TinyChain() {
  graph::GraphBuilder b("calibrate_overhead");
  graph::Value x = b.Parameter("p", {16});
  for (int i = 0; i < kChain; ++i) x = x.Tanh(absl::StrCat("tanh", i));
  b.Output(b.ReduceSum(x, {0}, /*keepdims=*/false, "loss"));
  return std::move(b).Build();
}

}  // namespace

absl::StatusOr<double> MeasureOpOverhead(const MeasureOptions& options) {
  TS_ASSIGN_OR_RETURN(graph::Graph g, TinyChain());
  const costmodel::GraphEstimate estimate = costmodel::EstimateGraph(g);
  int calls = 0;
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    calls += static_cast<int>(PlannerOpWork(g, id, estimate.ops[id]).size());
  }
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      exec::TrainingProgram::Create(std::move(g), {.threads = options.threads}));
  const int runs = options.quick ? 50 : 400;
  double best = 1e30;
  for (int run = 0; run <= runs; ++run) {  // run 0 warms up
    const double start = KernelClockSeconds(options);
    TS_RETURN_IF_ERROR(program->RunStep());
    const double seconds = KernelClockSeconds(options) - start;
    if (run > 0) best = std::min(best, seconds);
  }
  return best / calls;
}

}  // namespace tessera::tools
