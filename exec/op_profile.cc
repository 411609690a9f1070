// ProfileOps (op_profile.h).
#include "tessera/exec/op_profile.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"
#include "tessera/base/median.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/step_end.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/batch.h"

namespace tessera::exec {

namespace {

using Clock = std::chrono::steady_clock;

int64_t ParameterBytes(const std::vector<TrainingProgram::Parameter>& params) {
  int64_t bytes = 0;
  for (const TrainingProgram::Parameter& p : params) {
    bytes += static_cast<int64_t>(p.value.size() * sizeof(float));
  }
  return bytes;
}

// Seconds to copy every gradient into one buffer, as a gradient bucket is filled after
// backward (comm/gradient_buckets.h).
double CopyGradients(const std::vector<TrainingProgram::Parameter>& params,
                     std::vector<float>& fused) {
  size_t count = 0;
  for (const TrainingProgram::Parameter& p : params) count += p.grad.size();
  fused.resize(count);
  const Clock::time_point start = Clock::now();
  float* out = fused.data();
  for (const TrainingProgram::Parameter& p : params) {
    if (!p.grad.empty()) std::memcpy(out, p.grad.data(), p.grad.size() * sizeof(float));
    out += p.grad.size();
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

absl::StatusOr<costmodel::MeasuredOpTimes> ProfileOps(const graph::Graph& graph,
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
  std::vector<double> update_s, copy_s;  // every device's timed updates and bucket copies
  int64_t param_bytes = 0;
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
    Optimizer optimizer(options.optimizer, program->backend());
    std::vector<double> updates, copies;
    std::vector<float> fused;  // a gradient bucket's buffer, as the data-parallel runtime fills
    Batch inputs;
    for (int step = 0; step < options.warmup_steps + options.steps; ++step) {
      timing = step >= options.warmup_steps;
      TS_RETURN_IF_ERROR(data.Next(step, inputs));
      TS_RETURN_IF_ERROR(SetInputs(*program, inputs));
      TS_RETURN_IF_ERROR(program->RunStep());
      const double copy_s = CopyGradients(program->parameters(), fused);
      if (timing) copies.push_back(copy_s);
      const Clock::time_point start = Clock::now();
      // The step's end as the training loop runs it without clipping: the gradients' check,
      // then the update at a tiny rate (the parameters stay near their start, so the steps
      // stay alike).
      TS_ASSIGN_OR_RETURN(const bool finite,
                          GradientsFinite(program->backend(), program->parameters()));
      if (!finite) {
        return absl::InvalidArgumentError(absl::StrCat(
            "timing the ops of '", graph.name(), "': its gradients are not finite at step ", step));
      }
      TS_RETURN_IF_ERROR(optimizer.Apply(program->parameters(), 1e-6));
      if (timing) updates.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::lock_guard<std::mutex> lock(mu);
    update_s.insert(update_s.end(), updates.begin(), updates.end());
    copy_s.insert(copy_s.end(), copies.begin(), copies.end());
    param_bytes = ParameterBytes(program->parameters());
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
  costmodel::MeasuredOpTimes m{.share = 1.0 / options.devices};
  if (param_bytes > 0) {
    m.update = costmodel::MeasuredUpdate{
        .optimizer = options.optimizer.kind,
        .seconds_per_param_byte = base::Median(update_s) / static_cast<double>(param_bytes)};
    m.bucket_copy_s_per_byte = base::Median(copy_s) / static_cast<double>(param_bytes);
  }
  for (graph::NodeId n = 0; n < shard.num_nodes(); ++n) {
    if (seconds[0][n].empty()) continue;  // folded away or never run
    m.ops[shard.node(n).name] = {.forward_s = base::Median(seconds[0][n]),
                                 .backward_s = base::Median(seconds[1][n])};
  }
  return m;
}

}  // namespace tessera::exec
