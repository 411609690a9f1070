// The run a checkpoint directory belongs to, recorded beside its shards: DIR/plan.json is the
// plan the run trained with (a plan file, so `tessera train --strategy DIR/plan.json` reads it)
// with one more object, "run": the worker count, global batch, optimizer and seed. A run that
// resumes from DIR reads it before planning and follows that plan, whatever a fresh planning
// would choose; one whose settings contradict it is refused with one line per difference.
//
//   const RunRecord now = RecordOf(plan, OptimizerKind::kAdam, /*seed=*/1);
//   TS_RETURN_IF_ERROR(WriteRunRecord("ck", plan, now));      // rank 0, with its first shard
//   TS_ASSIGN_OR_RETURN(std::optional<RunRecord> saved, ReadRunRecord("ck"));
//   for (const std::string& line : RunDifferences(*saved, now)) std::cerr << line << "\n";
//       // "layer classifier: checkpoint model_parallel, this run data_parallel"
//
// Checkpoints written before plan.json existed have DIR/manifest.json (model, workers, batch
// and each layer's strategy): it is read as a record without optimizer, seed and layouts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/partitioner/layout.h"
#include "tessera/partitioner/plan.h"

namespace tessera::exec {

struct RunRecord {
  std::string model;
  int workers = 0;
  int64_t batch = 0;  // global
  std::optional<costmodel::OptimizerKind> optimizer;  // absent in a legacy manifest
  std::optional<uint64_t> seed;                       // absent in a legacy manifest
  std::map<std::string, partitioner::Strategy> strategies;  // by layer name
  std::map<std::string, partitioner::Layout> output_layouts;  // by layer name (may be empty)
  // The gradient bucket sizes the run used (partitioner::BucketSizes); 0 where the record has
  // none (a legacy manifest, an older plan.json).
  int64_t first_bucket_bytes = 0, bucket_bytes = 0;
};

// The record of a run training `plan` with `optimizer` from `seed`.
RunRecord RecordOf(const partitioner::Plan& plan, costmodel::OptimizerKind optimizer,
                   uint64_t seed);

// Writes DIR/plan.json (the plan file of `plan` with `record`'s "run" object), atomically,
// creating DIR, unless the file already holds that text. Errors name the file.
absl::Status WriteRunRecord(const std::string& dir, const partitioner::Plan& plan,
                            const RunRecord& record);

// The record of DIR: nullopt when DIR holds neither plan.json nor manifest.json (no run has
// saved there yet); DataLoss naming the file and the field when one is there but unreadable.
absl::StatusOr<std::optional<RunRecord>> ReadRunRecord(const std::string& dir);

// One line per difference, "<what>: checkpoint <saved>, this run <now>", in a fixed order:
// model, workers, batch, optimizer, seed, bucket sizes, then each layer's strategy and output
// layout (by name). What either record lacks is not compared. Empty when they agree.
std::vector<std::string> RunDifferences(const RunRecord& saved, const RunRecord& now);

}  // namespace tessera::exec
