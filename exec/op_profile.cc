// ProfileOps (op_profile.h).
#include "tessera/exec/op_profile.h"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/median.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/batch.h"

namespace tessera::exec {

absl::StatusOr<partitioner::MeasuredOpTimes> ProfileOps(const graph::Graph& graph,
                                                        const OpProfileOptions& options) {
  const int64_t batch = graph::GraphBatch(graph);
  if (options.devices < 1 || options.steps < 1 || options.warmup_steps < 0 ||
      options.threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "profiling ops needs devices >= 1, threads >= 1, steps >= 1 and warmup >= 0; got ",
        options.devices, ", ", options.threads, ", ", options.steps, ", ",
        options.warmup_steps));
  }
  graph::Graph shard = graph;
  if (options.devices > 1) {
    if (batch < options.devices || batch % options.devices != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "profiling ops of model '", graph.name(), "': its batch ", batch,
          " does not divide over ", options.devices, " devices"));
    }
    TS_RETURN_IF_ERROR(graph::SetBatch(shard, batch / options.devices));
  }
  // Every device's program runs at once, each on its own thread, as training runs them: the
  // devices share this machine's caches, memory bandwidth and clock (wide vector units lower
  // it when every core uses them). seconds[node][backward]: every device's timed steps.
  const int copies = options.concurrent ? options.devices : 1;
  std::vector<std::vector<double>> seconds[2];
  seconds[0].resize(shard.num_nodes());
  seconds[1].resize(shard.num_nodes());
  std::mutex mu;
  std::vector<absl::Status> status(copies);
  const auto run_device = [&](int device) -> absl::Status {
    bool timing = false;
    std::vector<std::vector<double>> mine[2];
    mine[0].resize(shard.num_nodes());
    mine[1].resize(shard.num_nodes());
    ProgramOptions po{.seed = options.seed, .threads = options.threads};
    po.on_node_timed = [&](graph::NodeId node, bool backward, double s) {
      if (timing) mine[backward ? 1 : 0][node].push_back(s);
    };
    TS_ASSIGN_OR_RETURN(std::unique_ptr<TrainingProgram> program,
                        TrainingProgram::Create(shard, po));
    RandomDataSource data(shard, {.seed = options.seed + static_cast<uint64_t>(device)});
    Batch inputs;
    for (int step = 0; step < options.warmup_steps + options.steps; ++step) {
      timing = step >= options.warmup_steps;
      TS_RETURN_IF_ERROR(data.Next(step, inputs));
      TS_RETURN_IF_ERROR(SetInputs(*program, inputs));
      TS_RETURN_IF_ERROR(program->RunStep());
    }
    std::lock_guard<std::mutex> lock(mu);
    for (int b = 0; b < 2; ++b) {
      for (graph::NodeId n = 0; n < shard.num_nodes(); ++n) {
        seconds[b][n].insert(seconds[b][n].end(), mine[b][n].begin(), mine[b][n].end());
      }
    }
    return absl::OkStatus();
  };
  {
    std::vector<std::thread> threads;
    for (int d = 1; d < copies; ++d) threads.emplace_back([&, d] { status[d] = run_device(d); });
    status[0] = run_device(0);
    for (std::thread& t : threads) t.join();
  }
  for (const absl::Status& st : status) TS_RETURN_IF_ERROR(st);
  partitioner::MeasuredOpTimes m{.share = 1.0 / options.devices};
  for (graph::NodeId n = 0; n < shard.num_nodes(); ++n) {
    if (seconds[0][n].empty()) continue;  // folded away or never run
    m.ops[shard.node(n).name] = {.forward_s = base::Median(seconds[0][n]),
                                 .backward_s = base::Median(seconds[1][n])};
  }
  return m;
}

}  // namespace tessera::exec
