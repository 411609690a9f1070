// Checkpoint files: parameters, optimizer state, step and random state, in one checksummed
// binary file per save, written atomically (each rank's shards of a hybrid run are such files:
// rank_checkpoint.h picks the newest step valid on every rank).
//
//   TS_ASSIGN_OR_RETURN(Checkpoint c, CaptureCheckpoint(*program, optimizer, /*step=*/1000,
//                                                       /*seed=*/7));
//   TS_ASSIGN_OR_RETURN(std::string path, SaveCheckpoint("runs/a", c));  // runs/a/ckpt-1000.tsr
//   ...
//   TS_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints("runs/a"));
//   TS_ASSIGN_OR_RETURN(Checkpoint c, ReadCheckpointFile(files.front()));   // the newest
//   TS_RETURN_IF_ERROR(RestoreCheckpoint(c, *program, optimizer));
//
// The file format (little-endian, version 2; 1 is read too) is in docs/training.md: a 32-byte header (magic
// "TSRCKPT\0", version, payload size, FNV-1a 64 of the payload) and the payload. Decoding never
// trusts a length: every count is checked against the bytes that are left before anything is
// allocated, so a truncated, corrupt or hostile file is an error, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/shape.h"

namespace tessera::exec {

inline constexpr uint32_t kCheckpointVersion = 2;  // version 1 (no buffers) is read too

struct CheckpointParameter {
  std::string name;
  graph::Shape shape;
  std::vector<float> values;
  std::vector<std::vector<float>> slots;  // optimizer state (momentum: v; Adam: m, v); may be empty
};

struct Checkpoint {
  int64_t step = 0;            // steps done; the next step to run
  uint64_t seed = 0;           // the run's seed (data and random streams are functions of it)
  int64_t program_steps = 0;   // TrainingProgram::steps_run() (the dropout-mask counter)
  std::string model;           // the graph's name, for messages
  OptimizerKind optimizer = OptimizerKind::kSgd;
  int64_t optimizer_updates = 0;
  std::vector<CheckpointParameter> parameters;  // in the program's order
  // Floating constants the training forward updates (BatchNormalization's running statistics),
  // without slots; empty in version-1 files.
  std::vector<CheckpointParameter> buffers;
};

// A copy of the program's parameters, the optimizer's state and the floating constants, read
// from the program's back-end (its errors as they are).
absl::StatusOr<Checkpoint> CaptureCheckpoint(TrainingProgram& program,
                                             const Optimizer& optimizer, int64_t step,
                                             uint64_t seed);
// Copies parameters and optimizer state back. InvalidArgument naming the parameter when the
// checkpoint lacks one of the program's parameters, has one the program lacks, or a shape or
// size differs; FailedPrecondition when it was written with another optimizer kind. Nothing is
// changed on error.
absl::Status RestoreCheckpoint(const Checkpoint& checkpoint, TrainingProgram& program,
                               Optimizer& optimizer);

// The file's bytes, and back. DecodeCheckpoint's errors (DataLoss) name `origin` (a path) and
// say what is wrong: bad magic, unknown version, truncated, checksum mismatch, a bad field.
std::string EncodeCheckpoint(const Checkpoint& checkpoint);
absl::StatusOr<Checkpoint> DecodeCheckpoint(absl::string_view bytes, absl::string_view origin);

// "DIR/ckpt-<step>.tsr".
std::string CheckpointPath(const std::string& dir, int64_t step);
// The checkpoint files of `dir` (names ckpt-<step>.tsr; temporaries and other files ignored)
// with their steps, newest first; empty when `dir` does not exist.
struct CheckpointFile {
  std::string path;
  int64_t step = 0;
};
absl::StatusOr<std::vector<CheckpointFile>> ListCheckpoints(const std::string& dir);

// Writes `checkpoint` to CheckpointPath(dir, step) through base::WriteFileAtomically (creating
// `dir` when missing), then keeps the `keep` newest files at or before its step and removes the
// rest, including any with a later step (left behind when a run resumed from an earlier one,
// e.g. after skipping a corrupt file). Returns the path written.
absl::StatusOr<std::string> SaveCheckpoint(const std::string& dir, const Checkpoint& checkpoint,
                                           int keep = 3);

// The checkpoint in `file`, verified: DataLoss naming the file when it cannot be read, does not
// decode (DecodeCheckpoint) or holds another step than its name says.
absl::StatusOr<Checkpoint> ReadCheckpointFile(const CheckpointFile& file);

}  // namespace tessera::exec
