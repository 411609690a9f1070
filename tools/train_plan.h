// The plan `tessera train` runs (train_command.cc): a fresh one from --strategy and the
// cluster, priced with this machine's op times stored in the `local` cluster (measured once
// per model, shapes, threads and optimizer; `--op-times remeasure` measures again), or, when
// --checkpoint names a directory a run has saved in, that run's plan (exec/run_record.h), so
// that the same command resumes with the same plan. Options the user did not give take the
// checkpoint's settings; options that contradict it are refused, one line per difference.
//
//   TS_ASSIGN_OR_RETURN(std::optional<exec::RunRecord> record, ReadCheckpointRecord(a));
//   if (record) AdoptCheckpoint(*record, a);              // before the model is loaded
//   TS_ASSIGN_OR_RETURN(partitioner::Plan plan, PlanTraining(a, graph, record, err));
#pragma once

#include <optional>
#include <ostream>

#include "absl/status/statusor.h"
#include "tessera/exec/run_record.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/plan.h"
#include "tessera/tools/train_args.h"

namespace tessera::tools {

// The record of the run that saved in --checkpoint DIR; nullopt without --checkpoint or when
// nothing was saved there yet.
absl::StatusOr<std::optional<exec::RunRecord>> ReadCheckpointRecord(const TrainArgs& a);

// Sets the options the user left out (--workers, --batch, --optimizer, --seed) to the
// checkpoint's.
void AdoptCheckpoint(const exec::RunRecord& record, TrainArgs& a);

// An executable plan of `graph` for a.workers workers: `record`'s strategies and layouts when
// resuming without an explicit --strategy, else a.strategy's. FailedPrecondition listing each
// difference from `record` (with the flag that caused it) when the plan is not the
// checkpoint's.
absl::StatusOr<partitioner::Plan> PlanTraining(const TrainArgs& a, const graph::Graph& graph,
                                               const std::optional<exec::RunRecord>& record,
                                               std::ostream& err);

}  // namespace tessera::tools
