// Sharded checkpoints (rank_checkpoint.h).
#include "tessera/exec/rank_checkpoint.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/checkpoint.h"

namespace tessera::exec {
namespace {

std::string RankDir(const std::string& dir, int rank) {
  return absl::StrCat(dir, "/rank-", rank);
}

nlohmann::json Manifest(const partitioner::Plan& plan) {
  nlohmann::json layers = nlohmann::json::object();
  for (const partitioner::LayerPlan& l : plan.layers) {
    layers[l.name] = std::string(partitioner::StrategyName(l.strategy));
  }
  return {{"model", plan.model_name}, {"workers", plan.devices}, {"batch", plan.batch},
          {"layers", layers}};
}

// The manifest in DIR against this run's; an error naming what differs.
absl::Status CheckManifest(const std::string& dir, const partitioner::Plan& plan) {
  const std::string path = dir + "/manifest.json";
  TS_ASSIGN_OR_RETURN(std::string text, base::ReadFileText(path, "checkpoint manifest", 1 << 26));
  const nlohmann::json saved = nlohmann::json::parse(text, nullptr, false);
  const nlohmann::json now = Manifest(plan);
  if (saved.is_discarded() || !saved.is_object()) {
    return absl::DataLossError(absl::StrCat(path, ": not valid JSON; the checkpoints of ", dir,
                                            " cannot be matched to this run"));
  }
  for (const char* key : {"model", "workers", "batch", "layers"}) {
    if (saved.value(key, nlohmann::json()) == now[key]) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "the checkpoints in ", dir, " were written by a run with another ", key, " (",
        saved.value(key, nlohmann::json()).dump(), ", now ", now[key].dump(),
        "); resume with the same model, plan and --workers, or use another --checkpoint DIR"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> ResumeShard(const std::string& dir, const partitioner::Plan& plan,
                                    TrainingProgram& program, Optimizer& optimizer,
                                    comm::Communicator& comm, uint64_t seed,
                                    std::vector<std::string>* warnings) {
  // Every rank's newest valid step (-1: none); the job resumes from the smallest.
  std::vector<int64_t> newest = {-1};
  TS_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(RankDir(dir, comm.rank())));
  std::vector<std::pair<int64_t, Checkpoint>> valid;
  for (const CheckpointFile& f : files) {
    absl::StatusOr<std::string> bytes = base::ReadFileText(f.path, "checkpoint", int64_t{1} << 40);
    absl::StatusOr<Checkpoint> c =
        bytes.ok() ? DecodeCheckpoint(*bytes, f.path) : absl::StatusOr<Checkpoint>(bytes.status());
    if (!c.ok()) {
      if (warnings != nullptr) warnings->push_back(absl::StrCat("skipped ", c.status().message()));
      continue;
    }
    valid.emplace_back(f.step, *std::move(c));
  }
  if (!valid.empty()) newest[0] = valid.front().first;
  std::vector<int64_t> any = newest;  // does any rank have one?
  std::vector<int64_t> negated = {-newest[0]};
  TS_RETURN_IF_ERROR(comm.AllReduce(any, comm::ReduceOp::kMax));
  TS_RETURN_IF_ERROR(comm.AllReduce(negated, comm::ReduceOp::kMax));
  const int64_t common = -negated[0];
  if (any[0] < 0) return 0;  // a fresh run
  TS_RETURN_IF_ERROR(CheckManifest(dir, plan));
  if (common < 0) {
    return absl::DataLossError(absl::StrCat(
        "some ranks have no valid checkpoint in ", dir, " (rank ", comm.rank(), " newest: ",
        newest[0], "); the run cannot resume consistently: start over with another directory"));
  }
  for (const auto& [step, c] : valid) {
    if (step != common) continue;
    if (c.seed != seed) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the checkpoints in ", dir, " were written with --seed ", c.seed, ", now ", seed));
    }
    TS_RETURN_IF_ERROR(RestoreCheckpoint(c, program, optimizer));
    return common;
  }
  return absl::DataLossError(absl::StrCat("rank ", comm.rank(), " has no valid checkpoint of step ",
                                          common, " in ", RankDir(dir, comm.rank()),
                                          ", the newest step every rank holds"));
}

absl::Status SaveShard(const std::string& dir, const partitioner::Plan& plan,
                       TrainingProgram& program, const Optimizer& optimizer, int rank,
                       int64_t step, uint64_t seed) {
  if (rank == 0) {
    std::error_code ignored;  // the write names the directory if it cannot be made
    std::filesystem::create_directories(dir, ignored);
    TS_RETURN_IF_ERROR(base::WriteFileAtomically(dir + "/manifest.json",
                                                 Manifest(plan).dump(2) + "\n",
                                                 "checkpoint manifest"));
  }
  return SaveCheckpoint(RankDir(dir, rank), CaptureCheckpoint(program, optimizer, step, seed))
      .status();
}

}  // namespace tessera::exec
