// Sharded checkpoints (exec/rank_checkpoint.h) through the hybrid runtime on 2 thread ranks:
// a damaged, truncated or missing shard is refused naming its file, the ranks fall back to the
// newest step valid on all of them, and the resumed run ends bit-identical to one that never
// stopped; what cannot be resumed consistently is an error on every rank.
#include "tessera/exec/rank_checkpoint.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/exec/checkpoint.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/hybrid_worker.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/planner.h"
#include "two_layer_mlp.h"

namespace tessera::exec {
namespace {

namespace fs = std::filesystem;

constexpr int kWorkers = 2;

graph::Graph Mlp() { return fixtures::TwoLayerMlp({}); }

// Model-parallel, so the two ranks' shards hold different slices.
partitioner::Plan ModelPlan(const graph::Graph& g) {
  costmodel::ClusterSpec cluster = *costmodel::LoadCluster("v100-vpc32");
  const costmodel::ClusterSpec sized = cluster.WithDevices(kWorkers);
  const costmodel::RooflineCostModel cost(sized);
  auto plan = partitioner::PlanModel(g, sized, cost,
                                     {.devices = kWorkers,
                                      .planner = partitioner::PlannerKind::kModel,
                                      .executable = true});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

struct JobRun {
  absl::Status status;                 // the job's (the first rank's error)
  std::vector<absl::Status> per_rank;  // every rank's
  WorkerResult rank0;
};

// `steps` steps with Adam, a checkpoint after every step in `dir` ("" for none).
JobRun Train(const graph::Graph& g, const partitioner::Plan& plan, int64_t steps,
          const std::string& dir, uint64_t seed = 3) {
  JobRun run;
  run.per_rank.resize(kWorkers);
  std::mutex mu;
  run.status = comm::RunRanksWithChannels(
      {.backend = comm::Backend::kThread, .timeout = absl::Seconds(5)}, kWorkers, 2,
      [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
        RandomDataSource data(g, {.seed = 9, .classes = 8});
        absl::StatusOr<WorkerResult> r = RunHybridWorker(
            g, plan, ch, data,
            {.steps = steps, .seed = seed, .optimizer = {.kind = OptimizerKind::kAdam},
             .checkpoint_dir = dir, .checkpoint_every = 1});
        std::lock_guard<std::mutex> lock(mu);
        run.per_rank[ch[0]->rank()] = r.status();
        if (r.ok() && ch[0]->rank() == 0) run.rank0 = *std::move(r);
        return r.status();
      });
  return run;
}

std::string Shard(const std::string& dir, int rank, int64_t step) {
  return CheckpointPath(absl::StrCat(dir, "/rank-", rank), step);
}

void FlipByte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x5a));
}

bool AnyContains(const std::vector<std::string>& lines, absl::string_view a, absl::string_view b) {
  for (const std::string& l : lines) {
    if (absl::StrContains(l, a) && absl::StrContains(l, b)) return true;
  }
  return false;
}

class RankCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/rank_ckpt_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    whole_ = Train(g_, plan_, 10, "");
    ASSERT_TRUE(whole_.status.ok()) << whole_.status;
    const JobRun first = Train(g_, plan_, 6, dir_);  // shards of steps 4, 5, 6 on each rank
    ASSERT_TRUE(first.status.ok()) << first.status;
  }
  // Resumes to 10 steps and expects the uninterrupted run's parameters, bit for bit.
  void ExpectResumedFrom(int64_t step) {
    const JobRun resumed = Train(g_, plan_, 10, dir_);
    ASSERT_TRUE(resumed.status.ok()) << resumed.status;
    EXPECT_EQ(resumed.rank0.resumed_from_step, step)
        << absl::StrJoin(resumed.rank0.warnings, "\n");
    EXPECT_EQ(resumed.rank0.parameters, whole_.rank0.parameters);
    warnings_ = resumed.rank0.warnings;
  }

  const graph::Graph g_ = Mlp();
  const partitioner::Plan plan_ = ModelPlan(g_);
  std::string dir_;
  JobRun whole_;
  std::vector<std::string> warnings_;
};

TEST_F(RankCheckpointTest, KeepsTheNewestShardsOfEveryRank) {
  for (int r = 0; r < kWorkers; ++r) {
    for (int64_t s = 1; s <= 6; ++s) EXPECT_EQ(fs::exists(Shard(dir_, r, s)), s >= 4) << s;
  }
  EXPECT_TRUE(fs::exists(dir_ + "/plan.json"));
  ExpectResumedFrom(6);
  EXPECT_TRUE(warnings_.empty()) << absl::StrJoin(warnings_, "\n");
}

TEST_F(RankCheckpointTest, CorruptNewestShardFallsBackToThePreviousStep) {
  FlipByte(Shard(dir_, 1, 6), 100);
  ExpectResumedFrom(5);
  // Rank 0 reports rank 1's refusal, naming the file and the checksum.
  EXPECT_TRUE(AnyContains(warnings_, "rank 1 refused a shard", Shard(dir_, 1, 6)))
      << absl::StrJoin(warnings_, "\n");
  EXPECT_TRUE(AnyContains(warnings_, Shard(dir_, 1, 6), "checksum mismatch"));
  EXPECT_TRUE(AnyContains(warnings_, "step 6 is not valid on every rank", "resuming from step 5"));
}

// Rank 0 lacks a valid 6 and rank 1 a valid 5: the newest step valid on both is 4.
TEST_F(RankCheckpointTest, DifferentDamageOnEachRankFindsTheNewestCommonStep) {
  fs::resize_file(Shard(dir_, 0, 6), 20);
  FlipByte(Shard(dir_, 1, 5), 40);
  ExpectResumedFrom(4);
  EXPECT_TRUE(AnyContains(warnings_, Shard(dir_, 0, 6), "truncated"));
  EXPECT_TRUE(AnyContains(warnings_, Shard(dir_, 1, 5), "checksum mismatch"));
}

TEST_F(RankCheckpointTest, MissingShardIsNamedAndSkipped) {
  fs::remove(Shard(dir_, 0, 6));
  ExpectResumedFrom(5);
  EXPECT_TRUE(AnyContains(warnings_, "step 6 is not valid on every rank", Shard(dir_, 0, 6)))
      << absl::StrJoin(warnings_, "\n");
}

TEST_F(RankCheckpointTest, ShardNamedForAnotherStepIsRefused) {
  fs::remove(Shard(dir_, 1, 6));
  fs::copy_file(Shard(dir_, 1, 5), Shard(dir_, 1, 6));
  ExpectResumedFrom(5);
  EXPECT_TRUE(AnyContains(warnings_, Shard(dir_, 1, 6), "holds step 5 but is named for step 6"));
}

// Killed during the first save: rank 0 wrote its shard of step 1, rank 1 none. A fresh start.
TEST_F(RankCheckpointTest, InterruptedFirstSaveStartsOver) {
  fs::remove_all(dir_);
  ASSERT_TRUE(Train(g_, plan_, 1, dir_).status.ok());
  fs::remove_all(dir_ + "/rank-1");
  ExpectResumedFrom(0);
  EXPECT_TRUE(AnyContains(warnings_, "is not on every rank", "starting from step 0"))
      << absl::StrJoin(warnings_, "\n");
}

TEST_F(RankCheckpointTest, NoCommonStepIsAnErrorOnEveryRank) {
  for (int64_t s = 4; s <= 6; ++s) FlipByte(Shard(dir_, 1, s), 60);
  const JobRun resumed = Train(g_, plan_, 10, dir_);
  for (int r = 0; r < kWorkers; ++r) {
    const absl::Status& s = resumed.per_rank[r];
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "rank " << r << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "no checkpoint step in " + dir_)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "rank 1: 3 files, valid steps []")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "rank 0: 3 files, valid steps [6,5,4]")) << s;
  }
}

TEST_F(RankCheckpointTest, AnotherSeedIsRefusedOnEveryRank) {
  const JobRun resumed = Train(g_, plan_, 10, dir_, /*seed=*/4);
  for (int r = 0; r < kWorkers; ++r) {
    const absl::Status& s = resumed.per_rank[r];
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << "rank " << r << ": " << s;
  }
  for (int r = 0; r < kWorkers; ++r) {
    EXPECT_TRUE(absl::StrContains(resumed.per_rank[r].message(), "seed: checkpoint 3, this run 4"))
        << resumed.per_rank[r];
  }
}

// Shards of another run (here: its record names another batch and gives fc2 another
// strategy) are refused as a whole, on every rank, with rank 0's reason, one line per
// difference; they are not skipped as damaged.
TEST_F(RankCheckpointTest, AnotherRunsRecordIsRefusedOnEveryRankLineByLine) {
  const std::string path = dir_ + "/plan.json";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t run = text.find("\"run\": {");
  ASSERT_NE(run, std::string::npos) << text;
  const size_t at = text.find("\"batch\": 8", run);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 10, "\"batch\": 9");
  const size_t fc2 = text.find("\"name\": \"fc2\"");
  const size_t strategy = text.find("\"strategy\": \"model_parallel\"", fc2);
  ASSERT_NE(strategy, std::string::npos) << text;
  text.replace(strategy, 29, "\"strategy\": \"data_parallel\"");
  std::ofstream(path, std::ios::trunc) << text;
  const JobRun resumed = Train(g_, plan_, 10, dir_);
  for (int r = 0; r < kWorkers; ++r) {
    const absl::Status& s = resumed.per_rank[r];
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << "rank " << r << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "\n  batch: checkpoint 9, this run 8\n")) << s;
    EXPECT_TRUE(absl::StrContains(
        s.message(), "\n  layer fc2: checkpoint data_parallel, this run model_parallel\n"))
        << s;
    EXPECT_FALSE(absl::StrContains(s.message(), "{")) << "no JSON in the message: " << s;
  }
  EXPECT_TRUE(absl::StrContains(resumed.per_rank[1].message(), "rank 0: ")) << resumed.per_rank[1];
}

// A run record that is not JSON is data loss naming the file and where the text breaks.
TEST_F(RankCheckpointTest, BrokenRecordIsDataLossNamingTheFile) {
  const std::string path = dir_ + "/plan.json";
  std::ofstream(path, std::ios::trunc) << "{\"model\": ";
  const JobRun resumed = Train(g_, plan_, 10, dir_);
  const absl::Status& s = resumed.per_rank[0];
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), path + ": not valid JSON: parse error at line 1"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "cannot be matched to this run")) << s;
}

// A save that fails (here: a directory stands where the file goes) names the file and leaves
// the shards written before it, and the run resumes from them.
TEST_F(RankCheckpointTest, FailedSaveKeepsThePreviousShards) {
  fs::create_directories(Shard(dir_, 1, 7));
  const JobRun more = Train(g_, plan_, 8, dir_);
  ASSERT_FALSE(more.per_rank[1].ok());
  EXPECT_TRUE(absl::StrContains(more.per_rank[1].message(), Shard(dir_, 1, 7)))
      << more.per_rank[1];
  for (int64_t s = 4; s <= 6; ++s) EXPECT_TRUE(fs::exists(Shard(dir_, 1, s))) << s;
  fs::remove(Shard(dir_, 1, 7));
  ExpectResumedFrom(6);
}

// A temporary left by a killed writer is removed by the next save, also when that writer is a
// zombie (exited, not reaped: an MPI rank whose launcher was killed); a live writer's stays.
TEST_F(RankCheckpointTest, NextSaveRemovesTemporariesOfDeadWriters) {
  const pid_t zombie = ::fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) ::_exit(0);
  ::usleep(100 * 1000);  // let it exit; it stays a zombie until waitpid below
  const std::string dead = Shard(dir_, 0, 7) + ".tmp." + std::to_string(zombie) + ".0";
  const std::string live = Shard(dir_, 1, 7) + ".tmp." + std::to_string(::getppid()) + ".0";
  std::ofstream(dead) << "partial";
  std::ofstream(live) << "partial";
  ExpectResumedFrom(6);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  ::waitpid(zombie, nullptr, 0);
}

}  // namespace
}  // namespace tessera::exec
