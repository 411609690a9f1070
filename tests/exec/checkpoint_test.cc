// Checkpoints: the round trip restores parameters and optimizer state exactly, every truncation
// and every flipped byte is refused without a crash, hostile lengths are bounded, the newest
// valid file wins, old ones are pruned, and another model's checkpoint names the parameter.
#include "tessera/exec/checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "tessera/base/file_io.h"
#include "tessera/base/hash.h"
#include "tessera/exec/data_source.h"
#include "tessera/graph/builder.h"
#include "two_layer_mlp.h"

namespace tessera::exec {
namespace {

namespace fs = std::filesystem;
using graph::DType;
using graph::GraphBuilder;
using graph::Value;

graph::Graph Mlp(int64_t hidden, const std::string& second = "fc2") {
  return fixtures::TwoLayerMlp(
      {.batch = 4, .hidden = hidden, .classes = 5, .relu = "relu", .second = second});
}

std::string TempDir(const std::string& name) {
  const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "test_tmp" / ("checkpoint_" + name);
  fs::remove_all(dir);
  return dir.string();
}

// A program trained a few steps with `kind`, so that its optimizer holds state.
struct Trained {
  std::unique_ptr<TrainingProgram> program;
  Optimizer optimizer;
};
Trained TrainSome(OptimizerKind kind, int steps, uint64_t seed = 1) {
  std::unique_ptr<TrainingProgram> program = *TrainingProgram::Create(Mlp(8), {.seed = seed});
  Backend& backend = program->backend();
  Trained t{std::move(program), Optimizer({.kind = kind}, backend)};
  RandomDataSource data(t.program->graph(), {.seed = 9});
  Batch batch;
  for (int s = 0; s < steps; ++s) {
    EXPECT_TRUE(data.Next(s, batch).ok());
    EXPECT_TRUE(SetInputs(*t.program, batch).ok());
    EXPECT_TRUE(t.program->RunStep().ok());
    EXPECT_TRUE(t.optimizer.Apply(t.program->parameters(), 0.01).ok());
  }
  return t;
}

void Corrupt(const std::string& path, size_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  f.seekp(static_cast<std::streamoff>(offset));
  c = static_cast<char>(c ^ 0x10);
  f.write(&c, 1);
}

TEST(CheckpointTest, RoundTripRestoresParametersAndOptimizerStateExactly) {
  Trained a = TrainSome(OptimizerKind::kAdam, 3);
  const std::string dir = TempDir("round_trip");
  auto path = SaveCheckpoint(dir, *CaptureCheckpoint(*a.program, a.optimizer, 3, 77));
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, CheckpointPath(dir, 3));
  EXPECT_TRUE(absl::EndsWith(*path, "ckpt-3.tsr"));

  auto loaded = ReadCheckpointFile({*path, 3});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->step, 3);
  EXPECT_EQ(loaded->seed, 77u);
  EXPECT_EQ(loaded->program_steps, 3);
  EXPECT_EQ(loaded->model, "mlp");
  // A program with other initial weights and a fresh optimizer take the saved state.
  auto b = TrainingProgram::Create(Mlp(8), {.seed = 2});
  ASSERT_TRUE(b.ok());
  Optimizer opt_b({.kind = OptimizerKind::kAdam}, (*b)->backend());
  ASSERT_TRUE(RestoreCheckpoint(*loaded, **b, opt_b).ok());
  ASSERT_EQ((*b)->parameters().size(), a.program->parameters().size());
  for (size_t i = 0; i < a.program->parameters().size(); ++i) {
    const auto& pa = a.program->parameters()[i];
    const auto& pb = (*b)->parameters()[i];
    ASSERT_EQ(pa.value.size(), pb.value.size());
    EXPECT_EQ(std::memcmp(pa.value.data(), pb.value.data(), pa.value.size() * 4), 0) << pa.name;
  }
  EXPECT_EQ(opt_b.updates(), 3);
  const auto state_a = *a.optimizer.ReadState(), state_b = *opt_b.ReadState();
  ASSERT_EQ(state_b.size(), state_a.size());
  for (const auto& [name, state] : state_a) {
    ASSERT_EQ(state.slots.size(), 2u) << name;
    EXPECT_EQ(state_b.at(name).slots, state.slots) << name;
  }
  // The next update from the restored state equals the original's.
  RandomDataSource data(a.program->graph(), {.seed = 9});
  Batch batch;
  ASSERT_TRUE(data.Next(3, batch).ok());
  for (auto* p : {a.program.get(), b->get()}) {
    ASSERT_TRUE(SetInputs(*p, batch).ok());
    ASSERT_TRUE(p->RunStep().ok());
  }
  ASSERT_TRUE(a.optimizer.Apply(a.program->parameters(), 0.01).ok());
  ASSERT_TRUE(opt_b.Apply((*b)->parameters(), 0.01).ok());
  for (size_t i = 0; i < a.program->parameters().size(); ++i) {
    const auto& pa = a.program->parameters()[i];
    EXPECT_EQ(std::memcmp(pa.value.data(), (*b)->parameters()[i].value.data(), pa.value.size() * 4), 0);
  }
}

// BatchNormalization's running statistics (floating constants the training forward updates)
// travel in the checkpoint, so evaluation after a resume sees the same statistics.
TEST(CheckpointTest, RunningStatisticsAreSavedAndRestored) {
  GraphBuilder b("bn");
  Value x = b.Input("x", {4, 3, 2, 2});
  Value labels = b.Input("labels", {4}, DType::kI64);
  Value h = b.BatchNorm2d(x, "bn").Flatten(1, "flat");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 5, "fc"), labels, "loss"));
  const graph::Graph g = *std::move(b).Build();
  auto trained = *TrainingProgram::Create(g, {.seed = 1});
  RandomDataSource data(g, {.seed = 9});
  Batch batch;
  ASSERT_TRUE(data.Next(0, batch).ok());
  ASSERT_TRUE(SetInputs(*trained, batch).ok());
  ASSERT_TRUE(trained->RunStep().ok());
  const std::vector<float> mean = trained->PersistentValue("bn.running_mean");
  ASSERT_EQ(mean.size(), 3u);
  ASSERT_NE(mean, std::vector<float>(3, 0.f));  // the step moved them
  Optimizer sgd({}, trained->backend());
  const Checkpoint c = *CaptureCheckpoint(*trained, sgd, 1, 1);
  auto decoded = DecodeCheckpoint(EncodeCheckpoint(c), "memory");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  auto fresh = *TrainingProgram::Create(g, {.seed = 1});
  ASSERT_TRUE(RestoreCheckpoint(*decoded, *fresh, sgd).ok());
  EXPECT_EQ(fresh->PersistentValue("bn.running_mean"), mean);
}

// A version-1 file (written before buffers existed: no buffer count) still loads.
TEST(CheckpointTest, VersionOneFilesAreRead) {
  Trained t = TrainSome(OptimizerKind::kAdam, 2);
  Checkpoint c = *CaptureCheckpoint(*t.program, t.optimizer, 2, 1);
  ASSERT_TRUE(c.buffers.empty());  // the MLP has no BatchNorm
  std::string bytes = EncodeCheckpoint(c);
  bytes.resize(bytes.size() - 4);  // drop the buffer count
  const uint32_t version = 1;
  const uint64_t payload = bytes.size() - 32;
  const uint64_t checksum = base::Fnv1a64(absl::string_view(bytes).substr(32));
  std::memcpy(bytes.data() + 8, &version, 4);
  std::memcpy(bytes.data() + 16, &payload, 8);
  std::memcpy(bytes.data() + 24, &checksum, 8);
  auto decoded = DecodeCheckpoint(bytes, "v1");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->parameters.size(), c.parameters.size());
  EXPECT_EQ(decoded->parameters[0].values, c.parameters[0].values);
}

TEST(CheckpointTest, EveryTruncationAndEveryFlippedByteIsRefused) {
  Trained a = TrainSome(OptimizerKind::kMomentum, 1);
  const std::string bytes = EncodeCheckpoint(*CaptureCheckpoint(*a.program, a.optimizer, 1, 0));
  ASSERT_TRUE(DecodeCheckpoint(bytes, "x").ok());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto c = DecodeCheckpoint(absl::string_view(bytes).substr(0, n), "ckpt-1.tsr");
    ASSERT_FALSE(c.ok()) << n;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss);
    ASSERT_TRUE(absl::StrContains(c.status().message(), "ckpt-1.tsr")) << c.status();
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    ASSERT_FALSE(DecodeCheckpoint(bad, "x").ok()) << "byte " << i;
  }
  auto longer = DecodeCheckpoint(bytes + "z", "x");
  EXPECT_TRUE(absl::StrContains(longer.status().message(), "too long")) << longer.status();
  std::string flipped_bytes = bytes;
  flipped_bytes[100] = static_cast<char>(flipped_bytes[100] ^ 0x40);
  auto flipped = DecodeCheckpoint(flipped_bytes, "x");
  EXPECT_TRUE(absl::StrContains(flipped.status().message(), "checksum")) << flipped.status();
  EXPECT_TRUE(absl::StrContains(DecodeCheckpoint("not a checkpoint at all, but 32+ bytes", "x")
                                    .status().message(), "magic"));
}

// FNV-1a 64, written out here again so the test does not trust the code under test.
uint64_t Fnv(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
void Put(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
// A file whose checksum is right around a payload that lies about its lengths.
std::string WithHeader(const std::string& payload) {
  std::string f("TSRCKPT\0", 8);
  Put(f, 1, 4);
  Put(f, 32, 4);
  Put(f, payload.size(), 8);
  Put(f, Fnv(payload), 8);
  return f + payload;
}
std::string Prefix(uint32_t params) {  // step, seed, program steps, kind, updates, model, count
  std::string p;
  Put(p, 5, 8), Put(p, 0, 8), Put(p, 5, 8), Put(p, 0, 1), Put(p, 5, 8);
  Put(p, 1, 4), p += "m";
  Put(p, params, 4);
  return p;
}

TEST(CheckpointTest, HostileLengthsAreBoundedByTheFile) {
  std::string huge_name = Prefix(1);
  Put(huge_name, 0xffffffffu, 4);  // a name of 4 GiB
  std::string huge_count = Prefix(1);
  Put(huge_count, 1, 4), huge_count += "w", Put(huge_count, 1, 4), Put(huge_count, 4, 8);
  Put(huge_count, uint64_t{1} << 62, 8);  // 2^62 floats
  std::string many_params = Prefix(0xffffffffu);
  std::string bad_dim = Prefix(1);
  Put(bad_dim, 1, 4), bad_dim += "w", Put(bad_dim, 2, 4), Put(bad_dim, uint64_t{1} << 40, 8),
      Put(bad_dim, uint64_t{1} << 40, 8);
  std::string twice = Prefix(2);
  for (int k = 0; k < 2; ++k) {  // "w": rank 0, one value 0.0f, no optimizer state
    Put(twice, 1, 4), twice += "w", Put(twice, 0, 4), Put(twice, 1, 8), Put(twice, 0, 4);
    Put(twice, 0, 4);
  }
  auto dup = DecodeCheckpoint(WithHeader(twice), "x");
  EXPECT_TRUE(absl::StrContains(dup.status().message(), "'w' twice")) << dup.status();
  for (const std::string& payload : {huge_name, huge_count, many_params, bad_dim, twice}) {
    auto c = DecodeCheckpoint(WithHeader(payload), "hostile.tsr");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_TRUE(absl::StrContains(c.status().message(), "bad field")) << c.status();
  }
  // Header that announces far more payload than there is.
  std::string header = WithHeader(Prefix(0));
  header[16 + 7] = 0x7f;
  EXPECT_TRUE(absl::StrContains(DecodeCheckpoint(header, "x").status().message(), "truncated"));
  // The same prefix with zero parameters is a valid (empty) checkpoint.
  EXPECT_TRUE(DecodeCheckpoint(WithHeader(Prefix(0)), "x").ok());
}

// A file is refused, naming it and what is wrong: a flipped byte (checksum), a truncation, a
// file named for another step; the newest valid one is rank_checkpoint.h's to pick.
TEST(CheckpointTest, ReadCheckpointFileRefusesCorruptTruncatedAndMisnamedFiles) {
  Trained a = TrainSome(OptimizerKind::kSgd, 1);
  const std::string dir = TempDir("read_file");
  for (int64_t step : {10, 20, 30}) {
    ASSERT_TRUE(SaveCheckpoint(dir, *CaptureCheckpoint(*a.program, a.optimizer, step, 0)).ok());
  }
  Corrupt(CheckpointPath(dir, 30), 200);
  auto corrupt = ReadCheckpointFile({CheckpointPath(dir, 30), 30});
  EXPECT_EQ(corrupt.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(corrupt.status().message(), "ckpt-30.tsr")) << corrupt.status();
  EXPECT_TRUE(absl::StrContains(corrupt.status().message(), "checksum")) << corrupt.status();
  fs::resize_file(CheckpointPath(dir, 20), fs::file_size(CheckpointPath(dir, 20)) - 3);
  auto truncated = ReadCheckpointFile({CheckpointPath(dir, 20), 20});
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(truncated.status().message(), "truncated")) << truncated.status();
  auto misnamed = ReadCheckpointFile({CheckpointPath(dir, 10), 11});
  EXPECT_TRUE(absl::StrContains(misnamed.status().message(), "holds step 10 but is named for "
                                                             "step 11")) << misnamed.status();
  EXPECT_TRUE(ReadCheckpointFile({CheckpointPath(dir, 10), 10}).ok());
}

TEST(CheckpointTest, SaveKeepsTheNewestAndRemovesStaleFiles) {
  Trained a = TrainSome(OptimizerKind::kSgd, 1);
  const std::string dir = TempDir("keep");
  for (int64_t step = 1; step <= 5; ++step) {
    ASSERT_TRUE(SaveCheckpoint(dir, *CaptureCheckpoint(*a.program, a.optimizer, step, 0), 3).ok());
  }
  // Files that are not checkpoints are ignored; a temporary of a dead process is cleaned up.
  ASSERT_TRUE(base::WriteFileAtomically(dir + "/notes.txt", "x", "test").ok());
  ASSERT_TRUE(base::WriteFileAtomically(dir + "/ckpt-9.tsr.tmp.999999999.0", "x", "test").ok());
  auto files = ListCheckpoints(dir);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].step, 5);
  EXPECT_EQ((*files)[2].step, 3);
  // Saving an earlier step (a run resumed from it) removes the later ones.
  ASSERT_TRUE(SaveCheckpoint(dir, *CaptureCheckpoint(*a.program, a.optimizer, 4, 0), 3).ok());
  files = ListCheckpoints(dir);
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].step, 4);
  EXPECT_EQ((*files)[1].step, 3);
  EXPECT_FALSE(fs::exists(dir + "/ckpt-9.tsr.tmp.999999999.0"));
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
}

TEST(CheckpointTest, AnotherModelsCheckpointNamesTheParameter) {
  Trained a = TrainSome(OptimizerKind::kAdam, 1);
  const Checkpoint c = *CaptureCheckpoint(*a.program, a.optimizer, 1, 0);
  auto wider = TrainingProgram::Create(Mlp(16), {});
  ASSERT_TRUE(wider.ok());
  Optimizer adam({.kind = OptimizerKind::kAdam}, (*wider)->backend());
  const std::vector<float> before((*wider)->parameters()[0].value.begin(),
                                  (*wider)->parameters()[0].value.end());
  absl::Status s = RestoreCheckpoint(c, **wider, adam);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'fc1.weight'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "[8,6]")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "[16,6]")) << s;
  EXPECT_EQ(std::vector<float>((*wider)->parameters()[0].value.begin(),
                               (*wider)->parameters()[0].value.end()), before);  // untouched
  EXPECT_EQ(adam.updates(), 0);

  auto renamed = TrainingProgram::Create(Mlp(8, "head"), {});
  ASSERT_TRUE(renamed.ok());
  s = RestoreCheckpoint(c, **renamed, adam);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'head.weight'")) << s;

  auto same = TrainingProgram::Create(Mlp(8), {});
  Optimizer sgd({.kind = OptimizerKind::kSgd}, (*same)->backend());
  s = RestoreCheckpoint(c, **same, sgd);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.message(), "adam")) << s;
}

}  // namespace
}  // namespace tessera::exec
