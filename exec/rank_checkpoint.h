// Sharded checkpoints of hybrid training: every rank saves its own shard (its parameters and
// optimizer state, exec/checkpoint.h's atomic, checksummed files) under DIR/rank-<r>/, and rank
// 0 writes DIR/plan.json, the run's record: its plan, workers, batch, optimizer and seed
// (run_record.h). A resumed run must have the same (an error with one line per difference
// otherwise); the ranks agree on the newest step that EVERY rank holds a valid shard of.
//
//   std::vector<std::string> warnings;  // refused shards, on every rank
//   TS_ASSIGN_OR_RETURN(int64_t first_step,
//                       ResumeShard(dir, plan, program, opt, comm, seed, &warnings));
//   ... after step s:  TS_RETURN_IF_ERROR(SaveShard(dir, plan, program, opt, rank, s + 1, seed));
//
// Crash safety (docs/reliability.md):
// - a shard is written to a temporary file, flushed and renamed (never seen half-written);
// - each rank keeps its kShardsKept newest shards. A rank deletes a shard only after writing
//   a newer one, and the hybrid runtime's collectives of every step mean that when a rank
//   writes the shard of step s, every rank has finished writing its previous shard; so the
//   previous checkpoint stays complete on every rank while the next one is being written;
// - on resume, a shard that is truncated, corrupt (checksum), unreadable, named for another
//   step or missing is refused with a warning naming the file, and the ranks fall back to the
//   newest step valid on all of them (agreed over `comm`, so every rank resumes the same step).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"
#include "tessera/partitioner/plan.h"

namespace tessera::exec {

// Shards each rank keeps (the newest; older ones are removed after a save).
inline constexpr int kShardsKept = 3;

// The step to start from, with parameters, optimizer state and the program's step counter
// restored. 0 (nothing restored) when DIR holds no shard, or when some rank holds none and the
// others one each (the run died during its first save). Otherwise the newest step every
// rank holds a valid shard of; `warnings` (may be null) gets, on every rank, one line per shard
// refused on any rank (naming the file and what is wrong) and one per newer step that is not on
// every rank. Errors, the same on every rank: FailedPrecondition when the run record or the
// seed belongs to another run; DataLoss when no step is valid on every rank (otherwise).
// Every rank must call it (it runs collectives on `comm`).
absl::StatusOr<int64_t> ResumeShard(const std::string& dir, const partitioner::Plan& plan,
                                    TrainingProgram& program, Optimizer& optimizer,
                                    comm::Communicator& comm, uint64_t seed,
                                    std::vector<std::string>* warnings);

// Saves this rank's shard after `step` steps as DIR/rank-<rank>/ckpt-<step>.tsr, then keeps
// the kShardsKept newest; rank 0 first writes DIR/plan.json when it is missing or differs.
// An error names the file and the OS reason (e.g. "No space left on device"); the shards
// written before stay as they were.
absl::Status SaveShard(const std::string& dir, const partitioner::Plan& plan,
                       TrainingProgram& program, const Optimizer& optimizer, int rank,
                       int64_t step, uint64_t seed);

}  // namespace tessera::exec
