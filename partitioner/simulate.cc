// The step simulator (docs/partitioner.md, "Simulator").
#include "tessera/partitioner/simulate.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "tessera/partitioner/activation_memory.h"
#include "tessera/partitioner/objective.h"

namespace tessera::partitioner {
namespace {

using costmodel::Collective;

// The gradient channel: buckets and single collectives, one at a time, in order.
struct Channel {
  const Problem& problem;
  std::vector<TimelineEvent>* timeline;
  double free_at = 0;
  double busy_s = 0;

  void Launch(const std::string& name, double ready_s, double duration_s) {
    const double start = std::max(ready_s, free_at);
    free_at = start + duration_s;
    busy_s += duration_s;
    if (timeline != nullptr && duration_s > 0) {
      timeline->push_back({.name = name, .lane = "comm", .start_s = start, .duration_s = duration_s});
    }
  }
};

void Span(std::vector<TimelineEvent>* timeline, const std::string& name, const char* lane,
          double start, double duration) {
  if (timeline != nullptr && duration > 0) {
    timeline->push_back({.name = name, .lane = lane, .start_s = start, .duration_s = duration});
  }
}

double OptimizerTime(const Problem& problem, double param_bytes) {
  if (param_bytes <= 0 || problem.comm.cost == nullptr) return 0;
  const int state = costmodel::OptimizerStateSlots(problem.options.optimizer);
  // Memory-bound: read params and grads and state, write params and state.
  const double values = param_bytes / 4;
  return problem.comm.cost->OpTime({.flops = values * (2 + 4 * state),
                                    .bytes = param_bytes * (3 + 2 * state),
                                    .op_class = graph::OpClass::kElementwise,
                                    .kind = costmodel::WorkKind::kUpdate,
                                    .optimizer = problem.options.optimizer,
                                    .param_bytes = param_bytes});
}

// A bucket of two or more gradients is all-reduced in a fused buffer: the runtime copies them in
// before the all-reduce and back after it (comm/gradient_buckets.h), each a read and a write of
// every byte. Measured on the device when the table has it, else a layout-class copy.
double BucketCopyTime(const Problem& problem, double bytes) {
  if (bytes <= 0 || problem.comm.cost == nullptr) return 0;
  return problem.comm.cost->OpTime({.flops = 0, .bytes = 2 * bytes,
                                    .op_class = graph::OpClass::kLayout,
                                    .kind = costmodel::WorkKind::kBucketCopy,
                                    .param_bytes = bytes});
}

}  // namespace

int64_t LayerMemory(const Problem& problem, const LayerOption& option) {
  const int64_t state = costmodel::OptimizerStateSlots(problem.options.optimizer);
  return option.param_bytes * (2 + state) + option.activation_bytes;
}

MemoryPrediction PredictMemory(const Problem& problem, const Choice& choice,
                               int64_t device_capacity_bytes) {
  MemoryPrediction m;
  m.device_capacity_bytes = device_capacity_bytes;
  const int p = problem.options.devices;
  double bucketed = 0;
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    const LayerOption& o = problem.layers[i].options[choice[i]];
    m.params_bytes += o.param_bytes;
    if (o.bucketed) bucketed += o.sync_bytes;
  }
  m.grads_bytes = m.params_bytes;
  m.optimizer_bytes =
      m.params_bytes * costmodel::OptimizerStateSlots(problem.options.optimizer);
  // Activations, their gradients, saved state and layer outputs: the most bytes live at once
  // in the step's lifetimes (activation_memory.h); the plan's arena replaces it at the end.
  m.activation_bytes = ActivationPeak(problem, choice);
  // Two bucket buffers: one being filled while the other is on the wire.
  m.comm_buffer_bytes =
      p > 1 ? 2 * static_cast<int64_t>(std::min<double>(bucketed, problem.options.bucket_bytes))
            : 0;
  m.peak_bytes.assign(p, 0);
  SetPeak(m);
  return m;
}

void SetPeak(MemoryPrediction& m) {
  const int64_t peak = m.params_bytes + m.grads_bytes + m.optimizer_bytes + m.activation_bytes +
                       m.workspace_bytes + m.comm_buffer_bytes;
  std::fill(m.peak_bytes.begin(), m.peak_bytes.end(), peak);  // every device holds the same share
  m.fits = peak <= m.device_capacity_bytes;
}

Simulation Simulate(const Problem& problem, const Choice& choice, int64_t device_capacity_bytes,
                    bool with_timeline) {
  Simulation sim;
  std::vector<TimelineEvent>* timeline = with_timeline ? &sim.timeline : nullptr;
  const int n = static_cast<int>(problem.layers.size());
  sim.layers.resize(n);
  double t = 0, compute = 0, blocking = 0, param_bytes = 0;
  // Forward: input transitions, compute, blocking collectives, in topological order.
  for (int i = 0; i < n; ++i) {
    const Layer& l = problem.layers[i];
    const LayerOption& o = l.options[choice[i]];
    LayerStats& s = sim.layers[i];
    for (size_t k = 0; k < l.inputs.size(); ++k) {
      const int e = l.inputs[k];
      const TransitionCost& tr = EdgeTransition(problem, e, ProducerLayout(problem, e, choice),
                                                o.inputs[k], o.partial_dx);
      Span(timeline, absl::StrCat(l.name, " input transition"), "comm", t, tr.forward_s);
      t += tr.forward_s;
      s.comm_s += tr.forward_s + tr.backward_s;
      s.sent_bytes += tr.sent_bytes;
    }
    Span(timeline, absl::StrCat(l.name, " forward"), "compute", t, o.forward_compute_s);
    t += o.forward_compute_s;
    Span(timeline, absl::StrCat(l.name, " forward collective"), "comm", t, o.forward_comm_s);
    t += o.forward_comm_s;
    s.compute_s = o.forward_compute_s + o.backward_compute_s;
    s.comm_s += o.forward_comm_s + o.backward_comm_s + o.sync_s;
    s.sent_bytes += o.blocking_sent_bytes + o.sync_sent_bytes;
    s.memory_bytes = LayerMemory(problem, o);
    compute += s.compute_s;
    blocking += s.comm_s - o.sync_s;
    param_bytes += o.param_bytes;
  }
  // Backward in reverse; each gradient joins the open bucket when its layer is done.
  Channel channel{problem, timeline};
  const double slowdown =
      problem.comm.cost != nullptr ? problem.comm.cost->OverlapSlowdown() : 0;
  double overlap_lost_s = 0;  // compute seconds lost to overlapped collectives
  double open_bytes = 0;
  size_t open_gradients = 0;
  int buckets = 0;
  struct Fused {
    double bytes, end_s;  // copied back once its all-reduce ends
  };
  std::vector<Fused> fused;
  auto flush = [&](double ready) {
    if (open_bytes <= 0) return;
    const double copy = open_gradients > 1 ? BucketCopyTime(problem, open_bytes) : 0;
    channel.Launch(absl::StrCat("gradient bucket ", buckets++), ready,
                   copy + problem.comm.Time(Collective::kAllReduce, open_bytes));
    if (copy > 0) fused.push_back({open_bytes, channel.free_at});
    open_bytes = 0;
    open_gradients = 0;
  };
  for (int i = n - 1; i >= 0; --i) {
    const Layer& l = problem.layers[i];
    const LayerOption& o = l.options[choice[i]];
    double backward_comm = o.backward_comm_s;
    for (size_t k = 0; k < l.inputs.size(); ++k) {
      const int e = l.inputs[k];
      backward_comm += EdgeTransition(problem, e, ProducerLayout(problem, e, choice), o.inputs[k],
                                      o.partial_dx).backward_s;
    }
    // A collective still running on the gradient channel slows this compute down.
    const double overlap =
        std::clamp(channel.free_at - t, 0.0, o.backward_compute_s) * slowdown;
    Span(timeline, absl::StrCat(l.name, " backward"), "compute", t,
         o.backward_compute_s + overlap);
    t += o.backward_compute_s + overlap;
    overlap_lost_s += overlap;
    Span(timeline, absl::StrCat(l.name, " backward collective"), "comm", t, backward_comm);
    t += backward_comm;
    if (o.sync_bytes <= 0) continue;
    if (!o.bucketed) {
      channel.Launch(absl::StrCat(l.name, " gradient"), t, o.sync_s);
      continue;
    }
    open_bytes += o.sync_bytes;
    open_gradients += std::max<size_t>(1, l.param_names.size());
    const double limit = static_cast<double>(buckets == 0 ? problem.options.first_bucket_bytes
                                                          : problem.options.bucket_bytes);
    if (open_bytes >= limit) flush(t);
  }
  flush(t);
  const double backward_end = t;
  // After backward the caller waits for each bucket in turn and copies it back.
  double copied_back = backward_end, copy_back_s = 0;
  for (size_t k = 0; k < fused.size(); ++k) {
    const double start = std::max(copied_back, fused[k].end_s);
    const double copy = BucketCopyTime(problem, fused[k].bytes);
    Span(timeline, absl::StrCat("gradient bucket copy-back ", k), "comm", start, copy);
    copied_back = start + copy;
    copy_back_s += copy;
  }
  const double comm_end = std::max(copied_back, channel.free_at);
  const double update = OptimizerTime(problem, param_bytes);
  Span(timeline, "optimizer update", "compute", comm_end, update);
  sim.step.step_time_s = comm_end + update;
  sim.step.compute_s = compute + update + overlap_lost_s;
  sim.step.comm_s = blocking + channel.busy_s + copy_back_s;
  sim.step.exposed_comm_s = blocking + (comm_end - backward_end);
  sim.memory = PredictMemory(problem, choice, device_capacity_bytes);
  return sim;
}

}  // namespace tessera::partitioner
