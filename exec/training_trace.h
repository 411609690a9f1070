// The measured timeline of training as Chrome trace-event JSON (`tessera train --trace FILE`,
// docs/timeline.md): a process per worker ("worker 0", ...) with the tracks "compute" (each
// node's forward and backward, the wait for the gradient buckets, the optimizer update),
// "activations" (the distributed layers' collectives) and "gradients" (each bucket's
// all-reduce), as partitioner::PlanTrace writes the predicted step.
//
//   HybridRunOptions o{.workers = 2};
//   o.worker.trace_steps = 3;                      // each rank keeps its last 3 steps
//   TS_ASSIGN_OR_RETURN(HybridRun run, TrainHybrid(graph, plan, o));
//   nlohmann::json trace = TrainingTrace(run.trace, {.model = "nmt", .backend = "thread"});
//
// Times are microseconds from the earliest traced span of any worker. Each worker's clock is
// aligned with the others' at a barrier after the last step (GatherTraceEvents: ranks leave a
// barrier within about one message latency of each other), so the workers' spans line up to
// within that, MPI ranks on other machines included. A collective's args hold its
// "collective" ("all_reduce", ...) and "bytes" (the payload this worker sent); every span's
// args its "step".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/step_trace.h"

namespace tessera::exec {

struct TrainingTraceInfo {
  std::string model, backend;  // for "otherData"
};

// workers[r]: worker r's events, on one time line (GatherTraceEvents); shifted so that the
// earliest starts at 0.
nlohmann::json TrainingTrace(const std::vector<std::vector<TraceEvent>>& workers,
                             const TrainingTraceInfo& info);

// Collective: every rank's events of `trace`, in rank order, on every rank (over `comm`), each
// rank's times from the moment it left a barrier with the others.
absl::StatusOr<std::vector<std::vector<TraceEvent>>> GatherTraceEvents(comm::Communicator& comm,
                                                                       const StepTrace& trace);

// The events as compact text and back (what GatherTraceEvents sends). Decode errors are
// InvalidArgument naming the event.
std::string EncodeTraceEvents(const std::vector<TraceEvent>& events);
absl::StatusOr<std::vector<TraceEvent>> DecodeTraceEvents(absl::string_view text);

}  // namespace tessera::exec
