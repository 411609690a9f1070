// Predicts one training step of a plan: forward in topological order, backward in
// reverse, gradient buckets on one communication channel overlapping the rest of
// backward, then the optimizer update; and the memory per device.
//
//   Simulation s = Simulate(problem, choice, /*capacity=*/16e9, /*timeline=*/true);
//   s.step.step_time_s; s.step.exposed_comm_s; s.memory.fits; s.timeline.size();
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/partitioner/plan.h"
#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

struct LayerStats {
  double compute_s = 0;   // forward + backward
  double comm_s = 0;      // blocking collectives, input transitions, gradient traffic
  double sent_bytes = 0;  // per device
  int64_t memory_bytes = 0;
};

struct Simulation {
  StepPrediction step;  // samples_per_s left 0 (the caller knows the batch)
  int buckets = 0;      // gradient buckets all-reduced per step
  MemoryPrediction memory;
  std::vector<LayerStats> layers;
  std::vector<TimelineEvent> timeline;  // device 0, when asked for
};

// A gradient bucket as the runtime forms it (comm/gradient_buckets.h): the bucketed gradients in
// the order backward finishes them (the options' BucketedGradients), bucket 0 holding up to
// problem.options.buckets.first_bytes and the others up to .bytes; a gradient that does not fit
// in the open bucket starts the next one (alone when it is larger than that).
struct Bucket {
  double bytes = 0;
  int gradients = 0;
  int last_layer = -1;  // the layer whose backward completes it (it is launched then)
};
std::vector<Bucket> FormBuckets(const Problem& problem, const Choice& choice);

// Memory one device holds for layer `layer` running `option` (excluding workspace
// and buffers): parameters, their gradients and optimizer state, kept activations.
int64_t LayerMemory(const Problem& problem, const LayerOption& option);

// The two gradient-bucket buffers one device holds (one being filled while the other is on the
// wire): 2 x the largest bucket size, at most 2 x the bucketed gradients; 0 on one device.
int64_t BucketBufferBytes(const Problem& problem, const Choice& choice);

// Parameters, gradients and optimizer state of the chosen options; activations as the peak
// of the step's lifetimes on one device (activation_memory.h); two gradient-bucket buffers.
MemoryPrediction PredictMemory(const Problem& problem, const Choice& choice,
                               int64_t device_capacity_bytes);

// Recomputes every device's peak and `fits` from the breakdown (after the planned arena
// replaced the activation peak).
void SetPeak(MemoryPrediction& m);

Simulation Simulate(const Problem& problem, const Choice& choice, int64_t device_capacity_bytes,
                    bool with_timeline);
// Simulate without the memory (left empty): what the planners compare step times with.
Simulation SimulateStep(const Problem& problem, const Choice& choice, bool with_timeline);

}  // namespace tessera::partitioner
