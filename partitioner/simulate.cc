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

// A span of the timeline, named `name` + `suffix` (joined only when there is a timeline: the
// planners simulate many steps without one).
void Span(std::vector<TimelineEvent>* timeline, const absl::AlphaNum& name,
          const absl::AlphaNum& suffix, const char* lane, double start, double duration) {
  if (timeline != nullptr && duration > 0) {
    timeline->push_back({.name = absl::StrCat(name, suffix), .lane = lane, .start_s = start,
                         .duration_s = duration});
  }
}

// The gradient channel: buckets and single collectives, one at a time, in order.
struct Channel {
  const Problem& problem;
  std::vector<TimelineEvent>* timeline;
  double free_at = 0;
  double busy_s = 0;

  void Launch(const absl::AlphaNum& name, const absl::AlphaNum& suffix, double ready_s,
              double duration_s) {
    const double start = std::max(ready_s, free_at);
    free_at = start + duration_s;
    busy_s += duration_s;
    Span(timeline, name, suffix, "comm", start, duration_s);
  }
};

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

// The gradients a bucketed option hands to the buckets, in the order the runtime fills them: the
// layer's own parameters one by one, scaled to the option's bytes; a problem built without their
// sizes splits the bytes evenly over the layer's parameter names (at least one gradient).
std::vector<double> BucketedGradients(const Layer& l, const LayerOption& o) {
  double owned = 0;
  for (int64_t b : l.owned_param_sizes) owned += static_cast<double>(b);
  if (owned > 0) {
    const double scale = o.sync_bytes == owned ? 1.0 : o.sync_bytes / owned;
    std::vector<double> out;
    for (int64_t b : l.owned_param_sizes) out.push_back(scale * static_cast<double>(b));
    return out;
  }
  const size_t n = std::max<size_t>(1, l.param_names.size());
  return std::vector<double>(n, o.sync_bytes / static_cast<double>(n));
}

}  // namespace

std::vector<Bucket> FormBuckets(const Problem& problem, const Choice& choice) {
  const BucketSizes& sizes = problem.options.buckets;
  std::vector<Bucket> buckets;
  for (int i = static_cast<int>(problem.layers.size()) - 1; i >= 0; --i) {
    const Layer& l = problem.layers[i];
    const LayerOption& o = l.options[choice[i]];
    if (!o.bucketed || o.sync_bytes <= 0) continue;
    for (double g : BucketedGradients(l, o)) {
      const double capacity =
          static_cast<double>(buckets.size() == 1 ? sizes.first_bytes : sizes.bytes);
      if (buckets.empty() || buckets.back().bytes + g > capacity) buckets.push_back({});
      Bucket& b = buckets.back();
      b.bytes += g;
      ++b.gradients;
      b.last_layer = i;
    }
  }
  return buckets;
}

int64_t LayerMemory(const Problem& problem, const LayerOption& option) {
  const int64_t state = costmodel::OptimizerStateSlots(problem.options.optimizer);
  return option.param_bytes * (2 + state) + option.activation_bytes;
}

int64_t BucketBufferBytes(const Problem& problem, const Choice& choice) {
  if (problem.options.devices <= 1) return 0;
  double bucketed = 0;
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    const LayerOption& o = problem.layers[i].options[choice[i]];
    if (o.bucketed) bucketed += o.sync_bytes;
  }
  const BucketSizes& sizes = problem.options.buckets;
  const double largest = static_cast<double>(std::max(sizes.first_bytes, sizes.bytes));
  return 2 * static_cast<int64_t>(std::min(bucketed, largest));
}

MemoryPrediction PredictMemory(const Problem& problem, const Choice& choice,
                               int64_t device_capacity_bytes) {
  MemoryPrediction m;
  m.device_capacity_bytes = device_capacity_bytes;
  const int p = problem.options.devices;
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    m.params_bytes += problem.layers[i].options[choice[i]].param_bytes;
  }
  m.grads_bytes = m.params_bytes;
  m.optimizer_bytes =
      m.params_bytes * costmodel::OptimizerStateSlots(problem.options.optimizer);
  // Activations, their gradients, saved state and layer outputs: the most bytes live at once
  // in the step's lifetimes (activation_memory.h); the plan's arena replaces it at the end.
  m.activation_bytes = ActivationPeak(problem, choice);
  m.comm_buffer_bytes = BucketBufferBytes(problem, choice);
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
  Simulation sim = SimulateStep(problem, choice, with_timeline);
  sim.memory = PredictMemory(problem, choice, device_capacity_bytes);
  return sim;
}

Simulation SimulateStep(const Problem& problem, const Choice& choice, bool with_timeline) {
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
      Span(timeline, l.name, " input transition", "comm", t, tr.forward_s);
      t += tr.forward_s;
      s.comm_s += tr.forward_s + tr.backward_s;
      s.sent_bytes += tr.sent_bytes;
    }
    Span(timeline, l.name, " forward", "compute", t, o.forward_compute_s);
    t += o.forward_compute_s;
    Span(timeline, l.name, " forward collective", "comm", t, o.forward_comm_s);
    t += o.forward_comm_s;
    s.compute_s = o.forward_compute_s + o.backward_compute_s;
    s.comm_s += o.forward_comm_s + o.backward_comm_s + o.sync_s;
    s.sent_bytes += o.blocking_sent_bytes + o.sync_sent_bytes;
    s.memory_bytes = LayerMemory(problem, o);
    compute += s.compute_s;
    blocking += s.comm_s - o.sync_s;
    param_bytes += o.param_bytes;
  }
  // Backward in reverse; a bucket is launched when the layer handing it its last gradient is
  // done, as the runtime does.
  Channel channel{problem, timeline};
  const double slowdown =
      problem.comm.cost != nullptr ? problem.comm.cost->OverlapSlowdown() : 0;
  double overlap_lost_s = 0;  // compute seconds lost to overlapped collectives
  const std::vector<Bucket> buckets = FormBuckets(problem, choice);
  size_t next_bucket = 0;
  struct Fused {
    double bytes, end_s;  // copied back once its all-reduce ends
  };
  std::vector<Fused> fused;
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
    Span(timeline, l.name, " backward", "compute", t,
         o.backward_compute_s + overlap);
    t += o.backward_compute_s + overlap;
    overlap_lost_s += overlap;
    Span(timeline, l.name, " backward collective", "comm", t, backward_comm);
    t += backward_comm;
    if (o.sync_bytes > 0 && !o.bucketed) {
      channel.Launch(l.name, " gradient", t, o.sync_s);
    }
    for (; next_bucket < buckets.size() && buckets[next_bucket].last_layer == i; ++next_bucket) {
      const Bucket& b = buckets[next_bucket];
      const double copy = b.gradients > 1 ? BucketCopyTime(problem, b.bytes) : 0;
      channel.Launch("gradient bucket ", next_bucket, t,
                     copy + problem.comm.Time(Collective::kAllReduce, b.bytes));
      if (copy > 0) fused.push_back({b.bytes, channel.free_at});
    }
  }
  const double backward_end = t;
  // After backward the caller waits for each bucket in turn and copies it back.
  double copied_back = backward_end, copy_back_s = 0;
  for (size_t k = 0; k < fused.size(); ++k) {
    const double start = std::max(copied_back, fused[k].end_s);
    const double copy = BucketCopyTime(problem, fused[k].bytes);
    Span(timeline, "gradient bucket copy-back ", k, "comm", start, copy);
    copied_back = start + copy;
    copy_back_s += copy;
  }
  const double comm_end = std::max(copied_back, channel.free_at);
  const double update = OptimizerTime(problem, param_bytes);
  Span(timeline, "optimizer update", "", "compute", comm_end, update);
  sim.step.step_time_s = comm_end + update;
  sim.step.compute_s = compute + update + overlap_lost_s;
  sim.step.comm_s = blocking + channel.busy_s + copy_back_s;
  sim.step.gradient_wait_s = comm_end - backward_end;
  sim.step.exposed_comm_s = blocking + sim.step.gradient_wait_s;
  sim.buckets = static_cast<int>(buckets.size());
  return sim;
}

}  // namespace tessera::partitioner
