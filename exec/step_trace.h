// A rank's measured timeline of its last training steps, for `tessera train --trace`
// (exec/training_trace.h writes it as a Chrome trace): every node's forward and backward span,
// every collective of the activation and gradient channels with its payload bytes, and the
// step's end.
//
//   StepTrace trace(/*steps_kept=*/3, node_names);           // the rank graph's, by NodeId
//   po.on_node_timed = [&](graph::NodeId n, bool b, double s) { trace.OnNode(n, b, s); };
//   channels[0]->set_observer(&trace.activations());
//   channels[1]->set_observer(&trace.gradients());
//   for (step ...) {
//     trace.BeginStep(step);
//     program.RunStep(); buckets.Finish();                    // spans and collectives recorded
//     trace.EndCommunication();                               // what follows is not traced
//     trace.AddComputeSpan("optimizer update", start, StepTrace::Clock::now());
//     trace.EndStep();                                        // keeps the last 3 steps
//   }
//   std::vector<TraceEvent> events = trace.Events(origin);    // times from `origin`
//
// Collectives are named by where they ran: an activation collective by the node span that
// contains it ("fc1 forward all_gather"; the distributed layers' collectives block inside their
// node), the gradient channel's k-th all-reduce of a step (they are launched in bucket order)
// "gradient bucket k". Collectives outside BeginStep .. EndCommunication are not recorded.
// Thread-safe: collectives end on the communicators' threads. Memory: the kept steps only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tessera/comm/communicator.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

// One span of a rank's measured steps.
struct TraceEvent {
  std::string name;   // "fc1 forward", "fc1 backward all_gather", "gradient bucket 0", ...
  std::string track;  // "compute", "activations" or "gradients"
  int64_t step = 0;
  double start_s = 0;  // from an origin (StepTrace::Events; TrainingTrace: the earliest span)
  double duration_s = 0;
  std::string collective;  // "all_reduce", "all_gather", ...; empty on the compute track
  int64_t bytes = 0;       // collectives: the payload this rank sent (comm::Traffic's count)
};

inline constexpr const char* kComputeTrack = "compute";
inline constexpr const char* kActivationsTrack = "activations";
inline constexpr const char* kGradientsTrack = "gradients";

class StepTrace {
 public:
  using Clock = std::chrono::steady_clock;

  StepTrace(int64_t steps_kept, std::vector<std::string> node_names);
  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;

  // ProgramOptions::on_node_timed: the node's span ends now.
  void OnNode(graph::NodeId node, bool backward, double seconds);
  // Set them as the activation and gradient channels' observers.
  comm::CollectiveObserver& activations() { return activations_; }
  comm::CollectiveObserver& gradients() { return gradients_; }

  void BeginStep(int64_t step);
  void AddComputeSpan(std::string name, Clock::time_point start, Clock::time_point end);
  // Collectives ending from now to the next BeginStep are left out (the ranks' agreement on
  // the loss, whose bytes the step's measure leaves out too).
  void EndCommunication();
  void EndStep();

  // The kept steps' spans, in step order, each step's sorted by start; times from `origin`.
  std::vector<TraceEvent> Events(Clock::time_point origin) const;

 private:
  struct Span {
    std::string name;
    const char* track;
    Clock::time_point start, end;
    std::string collective;
    int64_t sequence = -1;
    int64_t bytes = 0;
  };
  struct Step {
    int64_t step = 0;
    Clock::time_point start;
    std::vector<Span> spans;
  };
  class Channel : public comm::CollectiveObserver {
   public:
    Channel(StepTrace& trace, const char* track) : trace_(trace), track_(track) {}
    void OnCollective(const comm::CollectiveEvent& event) override;

   private:
    StepTrace& trace_;
    const char* track_;
  };

  void Add(Span span);
  static void NameCollectives(Step& step);

  const int64_t steps_kept_;
  const std::vector<std::string> node_names_;
  Channel activations_{*this, kActivationsTrack}, gradients_{*this, kGradientsTrack};
  mutable absl::Mutex mutex_;
  bool recording_ ABSL_GUARDED_BY(mutex_) = false;
  bool communicating_ ABSL_GUARDED_BY(mutex_) = false;
  Step current_ ABSL_GUARDED_BY(mutex_);
  std::deque<Step> kept_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tessera::exec
