// Hybrid training on P thread ranks against one worker on the same global batch: the same
// parameters after 20 steps for data, model, late-multiply and auto plans, and the bytes the
// ranks sent equal to what the plan says.
#include "tessera/exec/hybrid_worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/rank_plan.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/partitioner/planner.h"

namespace tessera::exec {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;
using partitioner::PlannerKind;
using partitioner::Strategy;

constexpr int64_t kBatch = 8;
constexpr int kSteps = 20;
constexpr double kLr = 0.1;

// A small classifier whose layers are all Gemms; fc1 reads the data input directly. With
// ignore_index >= 0 the loss is the mean over the labels other than it (like <pad>).
graph::Graph Mlp(int64_t ignore_index = -1) {
  GraphBuilder b("mlp");
  Value x = b.Input("x", {kBatch, 6});
  Value labels = b.Input("labels", {kBatch}, DType::kI64);
  Value h = b.Linear(x, 16, "fc1").Relu("relu1");
  h = b.Linear(h, 12, "fc2").Tanh("tanh2");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 8, "fc3"), labels, "loss",
                                 graph::Reduction::kMean, ignore_index));
  return *std::move(b).Build();
}

// A sequence model: MatMul on [T, B, H] (batch on axis 1) through a transpose.
graph::Graph SeqModel() {
  GraphBuilder b("seq");
  Value x = b.Input("x", {kBatch, 5, 6});
  Value labels = b.Input("labels", {kBatch, 5}, DType::kI64).Reshape({-1}, "flat_labels");
  Value t = x.Transpose({1, 0, 2}, "to_time_major");          // [5, B, 6]
  Value w = b.Parameter("proj.weight", {6, 12});
  Value h = b.Add(b.MatMul(t, w, "proj"), b.Parameter("proj.bias", {12}), "proj_bias").Relu("relu");
  Value back = h.Transpose({1, 0, 2}, "to_batch_major").Reshape({-1, 12}, "rows");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(back, 8, "cls"), labels, "loss"));
  return *std::move(b).Build();
}

// Token ids through an Embedding into a classifier: batch-major int64 ids, or int32 ids
// transposed to time-major ([5, B]: the batch on axis 1) and back after the lookup.
graph::Graph EmbeddingModel(bool time_major) {
  GraphBuilder b(time_major ? "emb_time_major" : "emb");
  Value ids = b.Input("ids", {kBatch, 5}, time_major ? DType::kI32 : DType::kI64);
  Value labels = b.Input("labels", {kBatch}, DType::kI64);
  if (time_major) ids = ids.Transpose({1, 0}, "to_time_major");
  Value e = b.Embedding(ids, 12, 8, "emb");
  if (time_major) e = e.Transpose({1, 0, 2}, "to_batch_major");
  Value h = e.Reshape({-1, 40}, "flat").Tanh("tanh");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 8, "cls"), labels, "loss"));
  return *std::move(b).Build();
}

absl::StatusOr<partitioner::Plan> MakePlan(const graph::Graph& g, int p, PlannerKind kind) {
  TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec cluster, costmodel::LoadCluster("v100-vpc32"));
  const costmodel::ClusterSpec sized = cluster.WithDevices(p);
  const costmodel::RooflineCostModel cost(sized);
  return partitioner::PlanModel(g, sized, cost,
                                {.devices = p, .planner = kind, .executable = true});
}

struct Single {
  std::map<std::string, std::vector<float>> parameters;
  std::vector<double> losses;
  int clipped_steps = 0;
};

// The reference: one program on the whole batch, clipping to the global norm when clip > 0.
void Clip(std::vector<TrainingProgram::Parameter>& params, double clip, int& clipped_steps) {
  double sum = 0;
  for (const auto& p : params) {
    for (float g : p.grad) sum += double(g) * g;
  }
  const double norm = std::sqrt(sum);
  if (clip <= 0 || norm <= clip) return;
  ++clipped_steps;
  for (auto& p : params) {
    for (float& g : p.grad) g *= static_cast<float>(clip / norm);
  }
}

Single TrainSingle(const graph::Graph& g, double clip = 0) {
  auto program = TrainingProgram::Create(g, {.seed = 3, .threads = 1});
  EXPECT_TRUE(program.ok()) << program.status();
  RandomDataSource data(g, {.seed = 9, .classes = 8});
  Optimizer opt({}, (*program)->backend());
  Batch batch;
  Single out;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_TRUE(data.Next(s, batch).ok());
    EXPECT_TRUE(SetInputs(**program, batch).ok());
    EXPECT_TRUE((*program)->RunStep().ok());
    Clip((*program)->parameters(), clip, out.clipped_steps);
    EXPECT_TRUE(opt.Apply((*program)->parameters(), kLr).ok());
    out.losses.push_back((*program)->Loss());
  }
  for (auto& p : (*program)->parameters()) {
    out.parameters[p.name].assign(p.value.begin(), p.value.end());
  }
  return out;
}

struct Hybrid {
  WorkerResult rank0;
  int64_t total_bytes_last_step = 0;  // every rank's payload
};

// The random batches as a source with rows (a file source's interface): NextRows returns the
// rows of the whole batch along axis 0 and counts how many it handed out.
class RowSource : public DataSource {
 public:
  RowSource(const graph::Graph& g, bool rows) : g_(g), random_(g, {.seed = 9, .classes = 8}), rows_(rows) {}
  absl::Status Next(int64_t step, Batch& batch) override {
    whole_rows_ += kBatch;
    return random_.Next(step, batch);
  }
  bool HasRows() const override { return rows_; }
  absl::Status NextRows(int64_t step, int64_t first, int64_t count, Batch& batch) override {
    Batch whole;
    TS_RETURN_IF_ERROR(random_.Next(step, whole));
    for (const auto& [name, values] : whole.values) {
      const graph::Shape& shape = g_.tensor(*g_.FindTensor(name)).shape;
      std::visit([&](const auto& v) { batch.values[name] = SliceAxis(v, shape, 0, first, count); },
                 values);
    }
    rows_handed_ += count;
    return absl::OkStatus();
  }
  int64_t rows_handed() const { return rows_handed_; }
  int64_t whole_rows() const { return whole_rows_; }

 private:
  const graph::Graph& g_;
  RandomDataSource random_;
  bool rows_;
  int64_t rows_handed_ = 0, whole_rows_ = 0;
};

absl::StatusOr<Hybrid> TrainHybrid(const graph::Graph& g, const partitioner::Plan& plan, int p,
                                   double clip = 0, bool rows = false,
                                   std::vector<int64_t>* rows_per_rank = nullptr) {
  Hybrid h;
  std::mutex mu;
  if (rows_per_rank != nullptr) rows_per_rank->assign(p, 0);
  TS_RETURN_IF_ERROR(comm::RunRanksWithChannels(
      {.backend = comm::Backend::kThread}, p, 2,
      [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
        RowSource data(g, rows);
        absl::Cleanup count = [&] {
          std::lock_guard<std::mutex> lock(mu);
          if (rows_per_rank != nullptr) {
            (*rows_per_rank)[ch[0]->rank()] = data.rows_handed() + data.whole_rows();
          }
        };
        TS_ASSIGN_OR_RETURN(WorkerResult r,
                            RunHybridWorker(g, plan, ch, data,
                                            {.steps = kSteps, .seed = 3, .lr = kLr,
                                             .clip_norm = clip}));
        std::lock_guard<std::mutex> lock(mu);
        h.total_bytes_last_step += r.steps.back().activation_bytes + r.steps.back().gradient_bytes;
        if (ch[0]->rank() == 0) h.rank0 = std::move(r);
        return absl::OkStatus();
      }));
  return h;
}

// Max |a - b| over the largest |b|, per parameter.
void ExpectSameParameters(const std::map<std::string, std::vector<float>>& want,
                          const std::map<std::string, std::vector<float>>& got,
                          const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (const auto& [name, w] : want) {
    ASSERT_TRUE(got.contains(name)) << what << " " << name;
    const std::vector<float>& v = got.at(name);
    ASSERT_EQ(v.size(), w.size()) << what << " " << name;
    double diff = 0, scale = 1e-30;
    for (size_t i = 0; i < w.size(); ++i) {
      diff = std::max(diff, std::abs(double(v[i]) - w[i]));
      scale = std::max(scale, std::abs(double(w[i])));
    }
    EXPECT_LE(diff / scale, 1e-4) << what << ": parameter " << name;
  }
}

int64_t PlannedBytes(const partitioner::Plan& plan) {
  int64_t sum = 0;
  for (const auto& l : plan.layers) sum += l.comm_bytes;
  return sum;
}

void CheckPlan(const graph::Graph& g, int p, PlannerKind kind, Strategy expect_somewhere,
               double clip = 0, bool rows = false, std::vector<int64_t>* rows_per_rank = nullptr) {
  const std::string what = absl::StrCat(g.name(), " P=", p, " planner ", static_cast<int>(kind),
                                        " clip ", clip);
  auto plan = MakePlan(g, p, kind);
  ASSERT_TRUE(plan.ok()) << what << ": " << plan.status();
  bool found = false;
  for (const auto& l : plan->layers) found = found || l.strategy == expect_somewhere;
  EXPECT_TRUE(found) << what << ": no layer is " << partitioner::StrategyName(expect_somewhere);
  auto hybrid = TrainHybrid(g, *plan, p, clip, rows, rows_per_rank);
  ASSERT_TRUE(hybrid.ok()) << what << ": " << hybrid.status();
  const Single single = TrainSingle(g, clip);
  if (clip > 0) EXPECT_GT(single.clipped_steps, kSteps / 2) << what << ": clipping must act";
  ExpectSameParameters(single.parameters, hybrid->rank0.parameters, what);
  // Every rank's payload in the last step against the plan's bytes per device.
  EXPECT_EQ(hybrid->total_bytes_last_step, p * PlannedBytes(*plan)) << what;
  EXPECT_GT(PlannedBytes(*plan), 0) << what;
  // The reported losses are the global batch's.
  ASSERT_EQ(hybrid->rank0.losses.size(), single.losses.size());
  for (size_t s = 0; s < single.losses.size(); ++s) {
    EXPECT_NEAR(hybrid->rank0.losses[s], single.losses[s], 1e-4 * std::abs(single.losses[s]))
        << what << " step " << s;
  }
}

TEST(HybridWorkerTest, DataParallelEqualsOneWorker) {
  for (int p : {2, 4}) CheckPlan(Mlp(), p, PlannerKind::kData, Strategy::kDataParallel);
}

TEST(HybridWorkerTest, ModelParallelEqualsOneWorker) {
  for (int p : {2, 4}) CheckPlan(Mlp(), p, PlannerKind::kModel, Strategy::kModelParallel);
}

TEST(HybridWorkerTest, LateMultiplyEqualsOneWorker) {
  for (int p : {2, 4}) CheckPlan(Mlp(), p, PlannerKind::kLate, Strategy::kLateMultiply);
}

// Clipping by the global norm: model-parallel shards add their slices' squares over the ranks,
// replicated gradients (all-reduced, or late-multiply's whole dW) count once.
TEST(HybridWorkerTest, ClippingByTheGlobalNormEqualsOneWorker) {
  CheckPlan(Mlp(), 2, PlannerKind::kModel, Strategy::kModelParallel, /*clip=*/0.05);
  CheckPlan(Mlp(), 4, PlannerKind::kLate, Strategy::kLateMultiply, /*clip=*/0.05);
  CheckPlan(Mlp(), 2, PlannerKind::kData, Strategy::kDataParallel, /*clip=*/0.05);
}

TEST(HybridWorkerTest, AutoPlanEqualsOneWorker) {
  for (int p : {2, 4}) CheckPlan(Mlp(), p, PlannerKind::kAuto, Strategy::kDataParallel);
}

// Labels 0 are ignored: the ranks' shards count different numbers of labels in most steps,
// so averaging the ranks' means would be wrong; each rank's share is its count over the total.
TEST(HybridWorkerTest, IgnoredLabelsWeighTheRanksByTheirCounts) {
  const graph::Graph g = Mlp(/*ignore_index=*/0);
  RandomDataSource data(g, {.seed = 9, .classes = 8});
  Batch batch;
  int uneven = 0;
  for (int s = 0; s < kSteps; ++s) {
    ASSERT_TRUE(data.Next(s, batch).ok());
    const std::vector<int64_t>& labels = batch.Ints("labels");
    const auto zeros = [&](int begin, int end) {
      return std::count(labels.begin() + begin, labels.begin() + end, 0);
    };
    uneven += zeros(0, kBatch / 2) != zeros(kBatch / 2, kBatch);
  }
  ASSERT_GT(uneven, 0) << "the data must give the ranks different counts for this test";
  CheckPlan(g, 2, PlannerKind::kData, Strategy::kDataParallel);
  CheckPlan(g, 2, PlannerKind::kModel, Strategy::kModelParallel);
}

// A source with rows gives each rank only its block (a file source decodes only those examples),
// and the ranks sum their label counts for the loss shares: the same training as one worker.
// A source without rows hands every rank the whole batch, of which it keeps its block.
TEST(HybridWorkerTest, SourcesWithRowsGiveEachRankOnlyItsBlock) {
  const graph::Graph g = Mlp(/*ignore_index=*/0);
  const std::vector<int64_t> half(2, kSteps * kBatch / 2), whole(2, kSteps * kBatch);
  std::vector<int64_t> decoded;
  CheckPlan(g, 2, PlannerKind::kData, Strategy::kDataParallel, 0, /*rows=*/true, &decoded);
  EXPECT_EQ(decoded, half);
  CheckPlan(g, 2, PlannerKind::kModel, Strategy::kModelParallel, 0, /*rows=*/true, &decoded);
  EXPECT_EQ(decoded, half);
  CheckPlan(EmbeddingModel(true), 2, PlannerKind::kModel, Strategy::kModelParallel, 0, true,
            &decoded);
  EXPECT_EQ(decoded, half);
  CheckPlan(g, 2, PlannerKind::kData, Strategy::kDataParallel, 0, /*rows=*/false, &decoded);
  EXPECT_EQ(decoded, whole);
}

TEST(HybridWorkerTest, TimeMajorMatMulRunsModelParallelAndLateMultiply) {
  CheckPlan(SeqModel(), 2, PlannerKind::kModel, Strategy::kModelParallel);
  CheckPlan(SeqModel(), 4, PlannerKind::kLate, Strategy::kLateMultiply);
}

// The Embedding's table split along its dimension: ids all-gathered, the lookup of the whole
// batch on the rank's columns, the rows exchanged back to the batch split; no dX.
TEST(HybridWorkerTest, ModelParallelEmbeddingEqualsOneWorker) {
  for (bool time_major : {false, true}) {
    const graph::Graph g = EmbeddingModel(time_major);
    for (int p : {2, 4}) {
      auto plan = MakePlan(g, p, PlannerKind::kModel);
      ASSERT_TRUE(plan.ok()) << plan.status();
      const auto emb = std::find_if(plan->layers.begin(), plan->layers.end(),
                                    [](const auto& l) { return l.name == "emb"; });
      ASSERT_NE(emb, plan->layers.end());
      EXPECT_EQ(emb->strategy, Strategy::kModelParallel) << g.name() << " P=" << p;
      CheckPlan(g, p, PlannerKind::kModel, Strategy::kModelParallel);
    }
  }
}

// Ranks' shards saved at step 5 by a run that ends there, resumed by a run of 10 steps: the same
// parameters, bit for bit, as 10 steps without a stop.
TEST(HybridWorkerTest, ShardedCheckpointsResumeBitIdentically) {
  const graph::Graph g = Mlp();
  auto plan = MakePlan(g, 2, PlannerKind::kModel);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string dir = ::testing::TempDir() + "/hybrid_ckpt";
  std::filesystem::remove_all(dir);
  const auto run = [&](int64_t steps, const std::string& ckpt, int workers,
                       const partitioner::Plan& p) -> absl::StatusOr<WorkerResult> {
    WorkerResult rank0;
    TS_RETURN_IF_ERROR(comm::RunRanksWithChannels(
        {.backend = comm::Backend::kThread}, workers, 2,
        [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
          RandomDataSource data(g, {.seed = 9, .classes = 8});
          TS_ASSIGN_OR_RETURN(WorkerResult r,
                              RunHybridWorker(g, p, ch, data,
                                              {.steps = steps, .seed = 3,
                                               .optimizer = {.kind = OptimizerKind::kAdam},
                                               .checkpoint_dir = ckpt, .checkpoint_every = 2}));
          if (ch[0]->rank() == 0) rank0 = std::move(r);
          return absl::OkStatus();
        }));
    return rank0;
  };
  auto whole = run(10, "", 2, *plan);
  auto first = run(5, dir, 2, *plan);
  auto resumed = run(10, dir, 2, *plan);
  ASSERT_TRUE(whole.ok() && first.ok() && resumed.ok()) << resumed.status();
  EXPECT_EQ(first->resumed_from_step, 0);
  EXPECT_EQ(resumed->resumed_from_step, 5);
  EXPECT_EQ(resumed->losses.size(), 5u);
  EXPECT_EQ(resumed->parameters, whole->parameters);  // bit-identical
  EXPECT_TRUE(std::filesystem::exists(dir + "/rank-1/ckpt-10.tsr"));
  // Another worker count (and so another plan) is refused, naming what differs.
  auto plan4 = MakePlan(g, 4, PlannerKind::kModel);
  ASSERT_TRUE(plan4.ok());
  auto other = run(12, dir, 4, *plan4);
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(absl::StrContains(other.status().message(), "workers")) << other.status();
}

// A plan with the given layers' strategies and output layouts (the others greedy).
struct Given {
  Strategy strategy;
  partitioner::Layout output;
};
absl::StatusOr<partitioner::Plan> GivenPlan(const graph::Graph& g, int p,
                                            const std::map<std::string, Given>& layers) {
  TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec cluster, costmodel::LoadCluster("v100-vpc32"));
  const costmodel::ClusterSpec sized = cluster.WithDevices(p);
  const costmodel::RooflineCostModel cost(sized);
  partitioner::PlanOptions options{.devices = p, .planner = PlannerKind::kGiven,
                                   .executable = true};
  for (const auto& [name, given] : layers) {
    options.strategies[name] = given.strategy;
    options.output_layouts[name] = given.output;
  }
  return partitioner::PlanModel(g, sized, cost, options);
}

// Every layer that runs its own collectives (not data-parallel) moved what the plan says.
void ExpectLayerBytes(const partitioner::Plan& plan, const WorkerResult& rank0, int p,
                      const std::string& what) {
  ASSERT_EQ(rank0.job.layer_bytes.size(), plan.layers.size()) << what;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const auto& l = plan.layers[i];
    if (l.strategy == Strategy::kDataParallel && !l.param_names.empty()) continue;
    EXPECT_EQ(rank0.job.layer_bytes[i], p * l.comm_bytes) << what << ": layer " << l.name;
  }
}

void CheckGiven(const graph::Graph& g, int p, const std::map<std::string, Given>& layers,
                const std::string& what) {
  auto plan = GivenPlan(g, p, layers);
  ASSERT_TRUE(plan.ok()) << what << ": " << plan.status();
  for (const auto& l : plan->layers) {
    auto it = layers.find(l.name);
    if (it == layers.end()) continue;
    ASSERT_EQ(l.strategy, it->second.strategy) << what << " " << l.name;
    ASSERT_EQ(l.output_layout, it->second.output) << what << " " << l.name;
  }
  auto hybrid = TrainHybrid(g, *plan, p);
  ASSERT_TRUE(hybrid.ok()) << what << ": " << hybrid.status();
  const Single single = TrainSingle(g);
  ExpectSameParameters(single.parameters, hybrid->rank0.parameters, what);
  EXPECT_EQ(hybrid->total_bytes_last_step, p * PlannedBytes(*plan)) << what;
  ExpectLayerBytes(*plan, hybrid->rank0, p, what);
  ASSERT_EQ(hybrid->rank0.losses.size(), single.losses.size());
  for (size_t s = 0; s < single.losses.size(); ++s) {
    EXPECT_NEAR(hybrid->rank0.losses[s], single.losses[s], 1e-4 * std::abs(single.losses[s]))
        << what << " step " << s;
  }
}

constexpr auto kFeature = partitioner::Layout::kFeature;
constexpr auto kBatchLayout = partitioner::Layout::kBatch;

// The classifier's weight split along the classes, its logits left split along them, and the
// loss computed there (the vocabulary-parallel softmax): no all-to-all of the logits.
TEST(HybridWorkerTest, VocabularyParallelLossEqualsOneWorker) {
  for (int64_t ignore : {-1, 0}) {
    const graph::Graph g = Mlp(ignore);
    for (int p : {2, 4}) {
      CheckGiven(g, p, {{"fc3", {Strategy::kModelParallel, kFeature}},
                        {"loss", {Strategy::kModelParallel, kFeature}}},
                 absl::StrCat("vocab-parallel P=", p, " ignore ", ignore));
    }
  }
}

// Layers on the feature layout keep nothing from one step to the next that a checkpoint
// misses, and compute nothing whose bits follow a buffer's address: 3 steps equal 1 step, a
// save, and 2 steps resumed in fresh programs, bit for bit. nmt's vocabulary-parallel loss
// (its exp over a kept buffer) and an MLP's feature-split chain.
TEST(HybridWorkerTest, FeatureLayoutsResumeBitIdentically) {
  struct Case {
    std::string what;
    graph::Graph graph;
    std::map<std::string, Given> layers;
  };
  const std::vector<Case> cases = {
      {"nmt vocab-parallel", *graph::zoo::BuildZooModel("nmt", 8),
       {{"classifier", {Strategy::kModelParallel, kFeature}},
        {"loss", {Strategy::kModelParallel, kFeature}}}},
      {"mlp feature chain", Mlp(/*ignore_index=*/0),
       {{"fc1", {Strategy::kModelParallel, kFeature}},
        {"relu1", {Strategy::kModelParallel, kFeature}},
        {"fc2", {Strategy::kModelParallel, kFeature}},
        {"tanh2", {Strategy::kModelParallel, kFeature}},
        {"fc3", {Strategy::kModelParallel, kFeature}},
        {"loss", {Strategy::kModelParallel, kFeature}}}}};
  for (const Case& c : cases) {
    const graph::Graph& g = c.graph;
    auto plan = GivenPlan(g, 2, c.layers);
    ASSERT_TRUE(plan.ok()) << c.what << ": " << plan.status();
    const std::string dir = ::testing::TempDir() + "/hybrid_feature_ckpt";
    std::filesystem::remove_all(dir);
    const auto run = [&](int64_t steps, const std::string& ckpt) -> absl::StatusOr<WorkerResult> {
      WorkerResult rank0;
      TS_RETURN_IF_ERROR(comm::RunRanksWithChannels(
          {.backend = comm::Backend::kThread}, 2, 2,
          [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
            RandomDataSource data(g, {.seed = 9, .classes = 8});
            TS_ASSIGN_OR_RETURN(WorkerResult r,
                                RunHybridWorker(g, *plan, ch, data,
                                                {.steps = steps, .seed = 3,
                                                 .optimizer = {.kind = OptimizerKind::kAdam},
                                                 .checkpoint_dir = ckpt}));
            if (ch[0]->rank() == 0) rank0 = std::move(r);
            return absl::OkStatus();
          }));
      return rank0;
    };
    auto whole = run(3, "");
    auto first = run(1, dir);
    auto resumed = run(3, dir);
    ASSERT_TRUE(whole.ok() && first.ok() && resumed.ok()) << c.what << ": " << resumed.status();
    EXPECT_EQ(resumed->resumed_from_step, 1) << c.what;
    for (const auto& [name, values] : whole->parameters) {
      EXPECT_TRUE(resumed->parameters.at(name) == values) << c.what << ": " << name << " differs";
    }
  }
}

// A chain on the feature layout: fc1's output split along its features through the Relu,
// gathered whole for fc2 (whose partial dX is reduce-scattered back along the features), its
// output through the Tanh, then exchanged back to the batch for fc3, run data-parallel,
// late-multiply or model-parallel.
TEST(HybridWorkerTest, FeatureSplitChainsEqualOneWorker) {
  const graph::Graph g = Mlp();
  for (Given fc3 : {Given{Strategy::kDataParallel, kBatchLayout},
                    Given{Strategy::kLateMultiply, kBatchLayout},
                    Given{Strategy::kModelParallel, kBatchLayout}}) {
    for (int p : {2, 4}) {
      CheckGiven(g, p, {{"fc1", {Strategy::kModelParallel, kFeature}},
                        {"relu1", {Strategy::kModelParallel, kFeature}},
                        {"fc2", {Strategy::kModelParallel, kFeature}},
                        {"tanh2", {Strategy::kModelParallel, kFeature}},
                        {"fc3", fc3},
                        {"loss", {Strategy::kDataParallel, kBatchLayout}}},
                 absl::StrCat("feature chain, fc3 ", partitioner::StrategyName(fc3.strategy),
                              " P=", p));
    }
  }
}

TEST(HybridWorkerTest, PlansTheRuntimeCannotRunAreRefusedNamingTheLayer) {
  const graph::Graph g = Mlp();
  auto made = MakePlan(g, 2, PlannerKind::kData);
  ASSERT_TRUE(made.ok()) << made.status();
  partitioner::Plan plan = *made;
  plan.layers[1].strategy = Strategy::kReplicated;
  auto r = BuildRankPlan(g, plan, 0, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), plan.layers[1].name)) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "PlanOptions::executable")) << r.status();
  // A feature layout the runtime does not run: a data-parallel layer leaving its output split
  // along the features, and a loss on the feature layout without a reduction to split.
  partitioner::Plan feature = *made;
  feature.layers[1].output_layout = partitioner::Layout::kFeature;
  auto dp_feature = BuildRankPlan(g, feature, 0, 2);
  ASSERT_FALSE(dp_feature.ok());
  EXPECT_TRUE(absl::StrContains(dp_feature.status().message(), feature.layers[1].name))
      << dp_feature.status();
  EXPECT_TRUE(absl::StrContains(dp_feature.status().message(), "feature layout"))
      << dp_feature.status();
  auto wrong_count = BuildRankPlan(g, plan, 0, 4);
  ASSERT_FALSE(wrong_count.ok());
  EXPECT_TRUE(absl::StrContains(wrong_count.status().message(), "2 workers")) << wrong_count.status();
  // An Embedding runs model-parallel but not late-multiply (it has no dW = X^T dY).
  const graph::Graph emb = EmbeddingModel(false);
  auto emb_plan = MakePlan(emb, 2, PlannerKind::kLate);
  ASSERT_TRUE(emb_plan.ok()) << emb_plan.status();
  for (auto& l : emb_plan->layers) {
    if (l.name == "emb") {
      EXPECT_NE(l.strategy, Strategy::kLateMultiply) << "the planner offered it";
      l.strategy = Strategy::kLateMultiply;
    }
  }
  auto late = BuildRankPlan(emb, *emb_plan, 0, 2);
  ASSERT_FALSE(late.ok());
  EXPECT_TRUE(absl::StrContains(late.status().message(), "layer 'emb'")) << late.status();
  EXPECT_TRUE(absl::StrContains(late.status().message(), "late-multiply")) << late.status();
}

// Shape variants (HybridOptions::variants): a sequence model whose padding is inert (the LSTM
// stops at each row's length, the loss ignores label 0), built at `length` steps.
graph::Graph PaddedSeq(int64_t length) {
  GraphBuilder b("padded_seq");
  Value ids = b.Input("ids", {kBatch, length}, DType::kI64);
  Value lengths = b.Input("lengths", {kBatch}, DType::kI64);
  Value labels = b.Input("labels", {kBatch, length}, DType::kI64);
  Value e = b.Embedding(ids.Transpose({1, 0}, "to_time_major"), 12, 8, "emb");  // [T, B, 8]
  Value h = b.Lstm(e, 8, "lstm", {.sequence_lens = lengths});                  // [T, B, 8]
  Value rows = h.Transpose({1, 0, 2}, "to_batch_major").Reshape({-1, 8}, "rows");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(rows, 6, "cls"), labels.Reshape({-1}, "flat_labels"),
                                 "loss", graph::Reduction::kMean, /*ignore_index=*/0));
  return *std::move(b).Build();
}

// Rows of PaddedSeq(8) padded on the right, step s's rows up to 1 + s % 8 long, with the
// variants of lengths `variants`; counts the steps fitted to each (kWhole first).
class PaddedSource : public DataSource {
 public:
  static constexpr int64_t kLength = 8;
  PaddedSource(std::vector<int64_t> variants, bool rows) : variants_(std::move(variants)), rows_(rows) {}
  absl::Status Next(int64_t step, Batch& batch) override {
    return NextRows(step, 0, kBatch, batch);
  }
  bool HasRows() const override { return rows_; }
  absl::Status NextRows(int64_t step, int64_t first, int64_t count, Batch& batch) override {
    std::vector<int64_t>& ids = batch.Ints("ids");
    std::vector<int64_t>& lengths = batch.Ints("lengths");
    std::vector<int64_t>& labels = batch.Ints("labels");
    ids.clear(), lengths.clear(), labels.clear();
    for (int64_t r = first; r < first + count; ++r) {
      uint64_t h = static_cast<uint64_t>(step * 1000003 + r + 1) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
      const int64_t n = 1 + static_cast<int64_t>(h % static_cast<uint64_t>(1 + step % kLength));
      lengths.push_back(n);
      for (int64_t t = 0; t < kLength; ++t) {
        ids.push_back(t < n ? 1 + static_cast<int64_t>((h >> (3 + t)) % 11) : 0);
        labels.push_back(t < n ? 1 + static_cast<int64_t>((h >> (7 + t)) % 5) : 0);
      }
    }
    return absl::OkStatus();
  }
  int Variant(const Batch& rows) const override {
    const std::vector<int64_t>& lengths = std::get<std::vector<int64_t>>(rows.values.at("lengths"));
    const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    for (size_t v = 0; v < variants_.size(); ++v) {
      if (variants_[v] >= longest) return static_cast<int>(v);
    }
    return kWhole;
  }
  absl::Status FitVariant(int v, Batch& rows) const override {
    ++fitted_[v + 1];
    if (v == kWhole) return absl::OkStatus();
    const int64_t keep = variants_[v];
    for (const char* name : {"ids", "labels"}) {
      std::vector<int64_t>& m = rows.Ints(name);
      std::vector<int64_t> cut;
      for (size_t i = 0; i < m.size(); ++i) {
        if (static_cast<int64_t>(i) % kLength < keep) cut.push_back(m[i]);
      }
      m = std::move(cut);
    }
    return absl::OkStatus();
  }
  int fitted(int v) const { return fitted_[v + 1]; }

 private:
  std::vector<int64_t> variants_;
  bool rows_;
  mutable std::atomic<int> fitted_[3] = {0, 0, 0};
};

// Each step runs at the shortest variant that holds every rank's rows, on programs that share
// the model's parameters: the result equals running every step at the whole length, whether the
// ranks read their own rows (and agree on the variant) or the whole batch.
TEST(HybridWorkerTest, ShapeVariantsTrainAsTheWholeShape) {
  const graph::Graph g = PaddedSeq(PaddedSource::kLength);
  auto plan = MakePlan(g, 2, PlannerKind::kModel);
  ASSERT_TRUE(plan.ok()) << plan.status();
  struct Run {
    WorkerResult rank0;
    std::vector<int> fitted;  // rank 0's steps per variant, kWhole first
  };
  const auto train = [&](bool variants, bool rows) -> absl::StatusOr<Run> {
    Run run;
    std::mutex mu;
    HybridOptions options{.steps = kSteps, .seed = 3, .lr = kLr};
    if (variants) options.variants = {PaddedSeq(3), PaddedSeq(5)};
    TS_RETURN_IF_ERROR(comm::RunRanksWithChannels(
        {.backend = comm::Backend::kThread}, 2, 2,
        [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
          PaddedSource data({3, 5}, rows);
          TS_ASSIGN_OR_RETURN(WorkerResult r, RunHybridWorker(g, *plan, ch, data, options));
          std::lock_guard<std::mutex> lock(mu);
          if (ch[0]->rank() == 0) {
            run.rank0 = std::move(r);
            run.fitted = {data.fitted(DataSource::kWhole), data.fitted(0), data.fitted(1)};
          }
          return absl::OkStatus();
        }));
    return run;
  };
  auto whole = train(false, true);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->fitted, (std::vector<int>{0, 0, 0}));
  // The variant of each step's whole batch, which the ranks, each seeing its rows, agree on.
  std::vector<int> expected = {0, 0, 0};
  PaddedSource source({3, 5}, true);
  for (int s = 0; s < kSteps; ++s) {
    Batch batch;
    ASSERT_TRUE(source.Next(s, batch).ok());
    ++expected[source.Variant(batch) + 1];
  }
  EXPECT_GT(expected[1], 0);
  EXPECT_GT(expected[2], 0);
  EXPECT_GT(expected[0], 0);
  for (bool rows : {true, false}) {
    const std::string what = rows ? "rows" : "whole batches";
    auto varied = train(true, rows);
    ASSERT_TRUE(varied.ok()) << what << ": " << varied.status();
    EXPECT_EQ(varied->fitted, expected) << what;
    ExpectSameParameters(whole->rank0.parameters, varied->rank0.parameters, what);
    ASSERT_EQ(varied->rank0.losses.size(), whole->rank0.losses.size());
    for (size_t s = 0; s < whole->rank0.losses.size(); ++s) {
      EXPECT_NEAR(varied->rank0.losses[s], whole->rank0.losses[s],
                  1e-5 * std::abs(whole->rank0.losses[s])) << what << " step " << s;
    }
  }
  // A variant that is another model is refused before any step, naming it.
  absl::Status bad = comm::RunRanksWithChannels(
      {.backend = comm::Backend::kThread}, 2, 2,
      [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
        PaddedSource data({3}, true);
        HybridOptions options{.steps = 1};
        options.variants = {Mlp()};
        return RunHybridWorker(g, *plan, ch, data, options).status();
      });
  EXPECT_TRUE(absl::StrContains(bad.message(), "model 'mlp'")) << bad;
}

}  // namespace
}  // namespace tessera::exec
