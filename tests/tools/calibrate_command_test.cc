// `tessera calibrate --quick -o FILE`: the file it writes is a valid `local` cluster that
// `tessera plan` accepts (by path and as --cluster local), and the fitted efficiencies
// reproduce the measured kernel times through RooflineCostModel (the fit equation is
// checked on the measurements; nothing about the machine's speed is asserted).
#if defined(TESSERA_HAVE_CALIBRATE_COMMAND) && defined(TESSERA_HAVE_PLAN_COMMANDS)
#include "tessera/tools/calibrate_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/tools/plan_command.h"

#include "command_runner.h"
#include "scoped_env.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;
using costmodel::Efficiency;

// Per process: ctest runs each test of the suite as its own process, in parallel, and each
// would otherwise rewrite (or delete) the same file under another's feet.
std::string TempPath(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / (std::to_string(getpid()) + "_" + name);
  fs::remove(p);
  return p.string();
}

// One quick calibration for the whole suite (a few seconds).
class CalibrateCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(TempPath("calibrated_local.json"));
    run_ = new CommandResult(RunCommand(RunCalibrate, {"--quick", "-o", *path_}));
  }
  static void TearDownTestSuite() {
    delete path_;
    delete run_;
  }
  static std::string* path_;
  static CommandResult* run_;
};
std::string* CalibrateCommandTest::path_ = nullptr;
CommandResult* CalibrateCommandTest::run_ = nullptr;

TEST_F(CalibrateCommandTest, WritesAValidLocalCluster) {
  ASSERT_EQ(run_->code, 0) << run_->err << run_->out;
  EXPECT_NE(run_->out.find("wrote " + *path_), std::string::npos) << run_->out;
  absl::StatusOr<costmodel::ClusterSpec> c = costmodel::LoadCluster(*path_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "local");
  EXPECT_EQ(c->nodes, 1);
  EXPECT_EQ(c->devices_per_node,
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(c->price_per_device_hour, 0);
  EXPECT_NE(c->source.find("measured by tessera calibrate"), std::string::npos) << c->source;
  EXPECT_GT(c->device.peak_flops_f32, 0);
  EXPECT_GT(c->device.memory_bandwidth, 0);
  EXPECT_GT(c->intra_node.bandwidth, 0);
  ASSERT_TRUE(c->efficiency.has_value());
  EXPECT_TRUE(c->efficiency->Validate().ok()) << c->efficiency->Validate();
  // Measured (a GEMM loop beside all-reduces); Validate bounds it to [0, 10].
  EXPECT_NE(run_->out.find("overlap: compute loses"), std::string::npos) << run_->out;
  // The table names every op class it fitted and the collectives it timed.
  for (const char* word : {"dense", "embedding", "recurrent", "normalization", "pooling",
                           "elementwise", "reduction", "softmax", "layout", "loss",
                           "all_reduce", "all_gather", "Gemm 32x512x512"}) {
    EXPECT_NE(run_->out.find(word), std::string::npos) << word << "\n" << run_->out;
  }
}

TEST_F(CalibrateCommandTest, PlanAcceptsTheFileByPathAndAsLocal) {
  ASSERT_EQ(run_->code, 0) << run_->err;
  CommandResult by_path = RunCommand(
      RunPlan, {"zoo:crnn", "--devices", "2", "--batch", "8", "--cluster", *path_});
  EXPECT_EQ(by_path.code, 0) << by_path.err;
  EXPECT_NE(by_path.out.find("local"), std::string::npos) << by_path.out;

  ScopedEnv env("TESSERA_LOCAL_CLUSTER", *path_);
  CommandResult local = RunCommand(
      RunPlan, {"zoo:crnn", "--devices", "2", "--batch", "8", "--cluster", "local"});
  EXPECT_EQ(local.code, 0) << local.err;
  EXPECT_EQ(local.out, by_path.out);
}

TEST_F(CalibrateCommandTest, PlanWithoutCalibrationSaysToRunIt) {
  const std::string missing = TempPath("not-calibrated.json");
  ScopedEnv env("TESSERA_LOCAL_CLUSTER", missing);
  CommandResult r = RunCommand(RunPlan, {"zoo:crnn", "--devices", "2", "--cluster", "local"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("run `tessera calibrate` first (it writes " + missing + ")"),
            std::string::npos)
      << r.err;
}

TEST(CalibrateFitEquationTest, FittedEfficienciesReproduceTheMeasuredKernels) {
  absl::StatusOr<Calibration> c = Calibrate({.devices = 2, .quick = true});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cluster.devices_per_node, 2);
  const costmodel::RooflineCostModel model(c->cluster);  // the file's efficiency
  const double overhead = c->cluster.efficiency->op_overhead_s;
  double predicted[costmodel::kOpClassCount] = {}, measured[costmodel::kOpClassCount] = {};
  for (const KernelSample& s : c->kernels) {
    const int i = Efficiency::Index(s.op_class);
    predicted[i] += PredictedSeconds(s, model);
    measured[i] += s.measured_s() + overhead * static_cast<double>(s.work.size());
  }
  for (int i = 0; i < costmodel::kOpClassCount; ++i) {
    const ClassFit& f = c->fit.classes[i];
    const char* name = graph::OpClassName(static_cast<graph::OpClass>(i)).data();
    ASSERT_GT(f.samples, 0) << name;
    EXPECT_NEAR(f.measured_s / measured[i], 1, 1e-9) << name;
    if (f.clamped) {  // memory-bound and faster than the triad, or shorter than the overhead
      EXPECT_FALSE(f.compute_bound && measured[i] > overhead * 100) << name;
      EXPECT_GE(predicted[i], measured[i]) << name;
      continue;
    }
    EXPECT_NEAR(predicted[i] / measured[i], 1, 0.01) << name;
  }
  // The peak is at least the GEMM's (raised only for a faster compute-bound class); the
  // bandwidth is the triad's.
  EXPECT_GE(c->cluster.device.peak_flops_f32, c->gemm_flops);
  EXPECT_EQ(c->cluster.device.memory_bandwidth, c->triad_bandwidth);
}

TEST(CalibrateUsageTest, HelpAndBadOptions) {
  CommandResult help = RunCommand(RunCalibrate, {"--help"});
  EXPECT_EQ(help.code, 0);
  for (const char* word : {"-o FILE", "--devices N", "--quick", "TESSERA_LOCAL_CLUSTER"}) {
    EXPECT_NE(help.out.find(word), std::string::npos) << word << "\n" << help.out;
  }
  EXPECT_EQ(RunCommand(RunCalibrate, {"--devices", "0"}).code, 2);
  CommandResult extra = RunCommand(RunCalibrate, {"--fast"});
  EXPECT_EQ(extra.code, 2);
  EXPECT_NE(extra.err.find("--fast"), std::string::npos) << extra.err;
}

}  // namespace
}  // namespace tessera::tools
#endif
