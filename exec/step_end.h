// The end of one training step, the same on every rank of the hybrid loop (hybrid_worker.h):
// after the gradient buckets are done, the ranks agree in one small all-reduce on the global
// loss, the gradients' global L2 norm (when clipping) and whether to stop; the step is refused
// when the loss or the norm is not finite (the parameters stay as they were before it); the
// gradients are clipped to the norm; then the optimizer updates at the scheduled rate.
//
//   TS_ASSIGN_OR_RETURN(StepEnd end, EndStep({.program = *program, .shards = &rank.params,
//                                             .comm = act, .loss_scale = scale}, step, lr,
//                                            {.clip_norm = 1.0}, optimizer));
//   end.loss;   // the global batch's loss
//
// The global norm counts every gradient once: a sharded parameter's slices add up over the
// ranks; a replicated one (all-reduced data-parallel gradients, late-multiply weights) is the
// same on every rank and is counted from this rank's copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/rank_plan.h"
#include "tessera/exec/training_program.h"

namespace tessera::exec {

struct StepEndOptions {
  double clip_norm = 0;                     // > 0: clip to this global L2 norm
  const std::atomic<bool>* stop = nullptr;  // raised on any rank: every rank stops after it
};

struct StepEnd {
  double loss = 0;       // the global batch's
  double grad_norm = 0;  // before clipping; computed only when clipping (else 0)
  bool stop = false;     // some rank asked to stop after this step
};

struct StepParts {
  TrainingProgram& program;
  const std::map<std::string, ParamShard>* shards;  // by parameter name (null: all replicated)
  comm::Communicator& comm;                         // every rank calls EndStep on it
  float loss_scale = 1.f;                           // this rank's share of the global loss
};

// InvalidArgument naming the step (and the rate) when the global loss is not finite or some
// rank's gradients hold NaN or infinite values, with what to try; the communicator's errors as
// they are. The update is not applied then.
absl::StatusOr<StepEnd> EndStep(const StepParts& parts, int64_t step, double lr,
                                const StepEndOptions& options, Optimizer& optimizer);

// Whether every gradient value is finite (what EndStep checks; op_profile.h times it with the
// update, as every step runs it).
absl::StatusOr<bool> GradientsFinite(Backend& backend,
                                     const std::vector<TrainingProgram::Parameter>& params);

}  // namespace tessera::exec
