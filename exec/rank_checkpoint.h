// Sharded checkpoints of hybrid training: every rank saves its own shard (its parameters and
// optimizer state, exec/checkpoint.h's atomic, checksummed files) under DIR/rank-<r>/, and rank
// 0 writes DIR/manifest.json naming the model, the worker count and every layer's strategy.
// A resumed run must have the same model, plan and worker count (an error naming what differs
// otherwise); the ranks agree on the newest step every one of them holds a valid file for.
//
//   TS_ASSIGN_OR_RETURN(int64_t first_step, ResumeShard(dir, plan, rank, program, opt, comm, seed));
//   ... after step s:  TS_RETURN_IF_ERROR(SaveShard(dir, plan, rank, program, opt, s + 1, seed));
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

// The step to start from: 0 when DIR holds no checkpoint; otherwise the newest step all ranks
// hold valid (skipped files are reported in `warnings`), with parameters, optimizer state and
// the program's step counter restored. Every rank calls it (it agrees on the step over `comm`).
absl::StatusOr<int64_t> ResumeShard(const std::string& dir, const partitioner::Plan& plan,
                                    TrainingProgram& program, Optimizer& optimizer,
                                    comm::Communicator& comm, uint64_t seed,
                                    std::vector<std::string>* warnings);

// Saves this rank's shard after `step` steps (keeping the 3 newest), and on rank 0 the manifest.
absl::Status SaveShard(const std::string& dir, const partitioner::Plan& plan,
                       TrainingProgram& program, const Optimizer& optimizer, int rank,
                       int64_t step, uint64_t seed);

}  // namespace tessera::exec
