// Sharded checkpoints (rank_checkpoint.h).
#include "tessera/exec/rank_checkpoint.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/gather_text.h"
#include "tessera/exec/checkpoint.h"
#include "tessera/exec/run_record.h"

namespace tessera::exec {
namespace {

constexpr int kListed = 32;  // newest valid steps each rank reports to the others

std::string RankDir(const std::string& dir, int rank) {
  return absl::StrCat(dir, "/rank-", rank);
}

// DIR's run record against this run's: OK when they agree, NotFound when DIR has none yet,
// FailedPrecondition with one line per difference otherwise (run_record.h).
absl::Status CheckRunRecord(const std::string& dir, const RunRecord& now) {
  TS_ASSIGN_OR_RETURN(const std::optional<RunRecord> saved, ReadRunRecord(dir));
  if (!saved.has_value()) {
    return absl::NotFoundError(absl::StrCat(dir, " holds no plan.json of the run"));
  }
  const std::vector<std::string> lines = RunDifferences(*saved, now);
  if (lines.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the checkpoints in ", dir, " belong to another run:\n  ", absl::StrJoin(lines, "\n  "),
      "\nresume with that run's settings (its plan is ", dir,
      "/plan.json), or train into another checkpoint directory"));
}

// What one rank holds: how many shard files, the steps that verify (newest first), and a
// message per refused file. Only the verdicts are kept, not the (possibly large) contents.
struct LocalShards {
  int64_t files = 0;
  std::vector<int64_t> valid;
  std::vector<std::string> refused;
};

absl::StatusOr<LocalShards> ScanShards(const std::string& rank_dir) {
  TS_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(rank_dir));
  LocalShards local;
  local.files = static_cast<int64_t>(files.size());
  for (const CheckpointFile& f : files) {
    absl::StatusOr<Checkpoint> c = ReadCheckpointFile(f);
    if (c.ok()) {
      local.valid.push_back(f.step);
    } else {
      local.refused.push_back(std::string(c.status().message()));
    }
  }
  return local;
}

// What every rank holds, as every rank sees it after the exchange.
struct AllShards {
  std::vector<int64_t> files;               // per rank
  std::vector<std::vector<int64_t>> valid;  // per rank, newest first (at most kListed)
  std::vector<std::string> refused;         // "rank r refused ..." lines, rank order
};

absl::StatusOr<AllShards> ExchangeShards(comm::Communicator& comm, const LocalShards& local) {
  const int p = comm.size();
  constexpr int kWidth = 1 + kListed;  // files, then the valid steps padded with -1
  std::vector<int64_t> mine(kWidth, -1), all(static_cast<size_t>(kWidth) * p);
  mine[0] = local.files;
  for (size_t i = 0; i < local.valid.size() && i < kListed; ++i) mine[1 + i] = local.valid[i];
  TS_RETURN_IF_ERROR(comm.AllGather(mine, all));
  TS_ASSIGN_OR_RETURN(std::vector<std::string> refused,
                      comm::AllGatherText(comm, absl::StrJoin(local.refused, "\n")));
  AllShards out;
  for (int r = 0; r < p; ++r) {
    const int64_t* row = all.data() + static_cast<size_t>(kWidth) * r;
    out.files.push_back(row[0]);
    out.valid.emplace_back();
    for (int i = 1; i < kWidth && row[i] >= 0; ++i) out.valid.back().push_back(row[i]);
    for (absl::string_view line : absl::StrSplit(refused[r], '\n', absl::SkipEmpty())) {
      out.refused.push_back(absl::StrCat("rank ", r, " refused a shard: ", line));
    }
  }
  return out;
}

bool Holds(const std::vector<int64_t>& steps, int64_t step) {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

// The newest step valid on every rank; -1 when there is none.
int64_t NewestCommonStep(const AllShards& all) {
  for (int64_t step : all.valid[0]) {
    if (std::all_of(all.valid.begin(), all.valid.end(),
                    [step](const std::vector<int64_t>& v) { return Holds(v, step); })) {
      return step;
    }
  }
  return -1;
}

// A line for every step newer than `common` that some rank holds valid and another does not.
std::vector<std::string> NewerSteps(const std::string& dir, const AllShards& all, int64_t common) {
  std::vector<int64_t> newer;
  for (const std::vector<int64_t>& v : all.valid) {
    for (int64_t s : v) {
      if (s > common && !Holds(newer, s)) newer.push_back(s);
    }
  }
  std::sort(newer.rbegin(), newer.rend());
  std::vector<std::string> lines;
  for (int64_t s : newer) {
    std::vector<std::string> lacking;
    for (size_t r = 0; r < all.valid.size(); ++r) {
      if (!Holds(all.valid[r], s)) {
        lacking.push_back(CheckpointPath(RankDir(dir, static_cast<int>(r)), s));
      }
    }
    lines.push_back(absl::StrCat("step ", s, " is not valid on every rank (missing or refused: ",
                                 absl::StrJoin(lacking, ", "), "); resuming from step ",
                                 std::max<int64_t>(common, 0), " instead"));
  }
  return lines;
}

// Whether the shards are those of a run that died during its first save: some rank has no
// shard and none has more than one.
bool DiedInFirstSave(const AllShards& all) {
  return *std::min_element(all.files.begin(), all.files.end()) == 0 &&
         *std::max_element(all.files.begin(), all.files.end()) <= 1;
}

// No step on every rank: OK (a fresh start) when the run died in its first save, otherwise
// DataLoss describing each rank's shards.
absl::Status NoCommonStep(const std::string& dir, const AllShards& all) {
  if (DiedInFirstSave(all)) return absl::OkStatus();
  std::vector<std::string> ranks;
  for (size_t r = 0; r < all.valid.size(); ++r) {
    ranks.push_back(absl::StrCat("rank ", r, ": ", all.files[r], " files, valid steps [",
                                 absl::StrJoin(all.valid[r], ","), "]"));
  }
  return absl::DataLossError(absl::StrCat(
      "no checkpoint step in ", dir, " is valid on every rank (", absl::StrJoin(ranks, "; "),
      "); the run cannot resume consistently: restore the missing or damaged shards, or start "
      "over in another checkpoint directory"));
}

// `mine` on this rank; when it is OK but another rank failed, that rank's error (the first
// such rank's code and message, prefixed with its rank). Collective: every rank stops together
// with the same reason.
absl::Status AgreeOk(comm::Communicator& comm, const absl::Status& mine) {
  std::vector<int64_t> code = {static_cast<int64_t>(mine.code())}, codes(comm.size());
  TS_RETURN_IF_ERROR(comm.AllGather(code, codes));
  if (std::all_of(codes.begin(), codes.end(), [](int64_t c) { return c == 0; })) {
    return absl::OkStatus();
  }
  TS_ASSIGN_OR_RETURN(std::vector<std::string> messages,
                      comm::AllGatherText(comm, std::string(mine.message())));
  if (!mine.ok()) return mine;
  for (int r = 0; r < comm.size(); ++r) {
    if (codes[r] == 0) continue;
    return absl::Status(static_cast<absl::StatusCode>(codes[r]),
                        absl::StrCat("rank ", r, ": ", messages[r]));
  }
  return absl::OkStatus();
}

// This rank's shard of `step`, checked against the run's seed, into the program.
absl::Status Restore(const std::string& dir, int rank, int64_t step, uint64_t seed,
                     TrainingProgram& program, Optimizer& optimizer) {
  TS_ASSIGN_OR_RETURN(Checkpoint c,
                      ReadCheckpointFile({CheckpointPath(RankDir(dir, rank), step), step}));
  if (c.seed != seed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the checkpoints in ", dir, " were written with seed ", c.seed, ", this run has seed ",
        seed, "; resume with the same seed, or train into another checkpoint directory"));
  }
  return RestoreCheckpoint(c, program, optimizer);
}

}  // namespace

absl::StatusOr<int64_t> ResumeShard(const std::string& dir, const partitioner::Plan& plan,
                                    TrainingProgram& program, Optimizer& optimizer,
                                    comm::Communicator& comm, uint64_t seed,
                                    std::vector<std::string>* warnings) {
  // Step 1: every rank verifies its own shards; listing errors stop every rank together.
  absl::StatusOr<LocalShards> local = ScanShards(RankDir(dir, comm.rank()));
  TS_RETURN_IF_ERROR(AgreeOk(comm, local.status()));
  // Step 2: every rank learns what every rank holds, and so picks the same step.
  TS_ASSIGN_OR_RETURN(AllShards all, ExchangeShards(comm, *local));
  if (std::all_of(all.files.begin(), all.files.end(), [](int64_t n) { return n == 0; })) {
    return 0;  // a fresh run
  }
  const int64_t common = NewestCommonStep(all);
  // Step 3: rank 0 matches the run record (plan.json) to this run (shards of another run are
  // refused as a whole, not skipped); it may be missing only when the first save was cut short.
  absl::Status record =
      comm.rank() == 0
          ? CheckRunRecord(dir, RecordOf(plan, optimizer.options().kind, seed))
          : absl::OkStatus();
  if (absl::IsNotFound(record) && common < 0 && DiedInFirstSave(all)) {
    record = absl::OkStatus();
  }
  TS_RETURN_IF_ERROR(AgreeOk(comm, record));
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), all.refused.begin(), all.refused.end());
    for (std::string& line : NewerSteps(dir, all, common)) warnings->push_back(std::move(line));
  }
  if (common < 0) {
    // The same verdict on every rank: all of them see the same `all`.
    TS_RETURN_IF_ERROR(NoCommonStep(dir, all));
    if (warnings != nullptr) {
      warnings->push_back(absl::StrCat("the first checkpoint in ", dir,
                                       " is not on every rank; starting from step 0"));
    }
    return 0;
  }
  // Step 4: restore that step; an error on any rank stops them all.
  TS_RETURN_IF_ERROR(
      AgreeOk(comm, Restore(dir, comm.rank(), common, seed, program, optimizer)));
  return common;
}

absl::Status SaveShard(const std::string& dir, const partitioner::Plan& plan,
                       TrainingProgram& program, const Optimizer& optimizer, int rank,
                       int64_t step, uint64_t seed) {
  if (rank == 0) {
    // The same for the whole run: rewritten only when it differs (run_record.h).
    TS_RETURN_IF_ERROR(
        WriteRunRecord(dir, plan, RecordOf(plan, optimizer.options().kind, seed)));
  }
  TS_ASSIGN_OR_RETURN(Checkpoint checkpoint, CaptureCheckpoint(program, optimizer, step, seed));
  return SaveCheckpoint(RankDir(dir, rank), checkpoint, kShardsKept).status();
}

}  // namespace tessera::exec
