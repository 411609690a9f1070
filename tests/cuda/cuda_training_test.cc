// Training steps on the CUDA back-end against the CPU back-end (issue 24's acceptance): the same
// graph, seed, data and optimizer, 20 steps each, TF32 off; every parameter equal within 1e-3
// relative (L2 over the parameter, with a floor of 1e-2 for the norm) and the losses within 1e-3.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/base/cuda/cuda_status.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/backend/cpu_backend.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/nmt/nmt_job.h"
#include "tessera/jobs/ocr/ocr_job.h"
#include "tessera/tests/cuda/cuda_op_test_util.h"  // SKIP_WITHOUT_GPU
#include "tessera/tests/exec/two_layer_mlp.h"

namespace tessera::exec {
namespace {

constexpr int kSteps = 20;

struct Trained {
  std::vector<float> losses;
  std::map<std::string, std::vector<float>> params;
};

// kSteps steps of `kind` at rate `lr` on `data` (the same batches for every back-end).
absl::StatusOr<Trained> Train(const graph::Graph& g, const std::vector<Batch>& data,
                              std::shared_ptr<Backend> backend, OptimizerKind kind, double lr) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<TrainingProgram> program,
                      TrainingProgram::Create(g, {.seed = 1, .backend = std::move(backend)}));
  Optimizer optimizer({.kind = kind}, program->backend());
  Trained out;
  for (const Batch& batch : data) {
    TS_RETURN_IF_ERROR(SetInputs(*program, batch));
    TS_RETURN_IF_ERROR(program->RunStep());
    TS_RETURN_IF_ERROR(optimizer.Apply(program->parameters(), lr));
    out.losses.push_back(program->Loss());
  }
  for (TrainingProgram::Parameter& p : program->parameters()) {
    TS_ASSIGN_OR_RETURN(out.params[p.name], ReadFloats(program->backend(), p.value));
  }
  return out;
}

std::vector<Batch> Batches(DataSource& source) {
  std::vector<Batch> out(kSteps);
  for (int s = 0; s < kSteps; ++s) EXPECT_TRUE(source.Next(s, out[s]).ok());
  return out;
}

void ExpectSameTraining(const graph::Graph& g, const std::vector<Batch>& data, OptimizerKind kind,
                        double lr) {
  absl::StatusOr<std::unique_ptr<Backend>> gpu = MakeBackend({.device = Device::kCuda});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  absl::StatusOr<Trained> on_gpu = Train(g, data, std::move(*gpu), kind, lr);
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
  absl::StatusOr<Trained> on_cpu = Train(g, data, MakeCpuBackend(2), kind, lr);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(on_gpu->losses[s], on_cpu->losses[s], 1e-3 * std::max(1.f, on_cpu->losses[s]))
        << g.name() << " step " << s;
  }
  for (const auto& [name, want] : on_cpu->params) {
    const std::vector<float>& got = on_gpu->params.at(name);
    ASSERT_EQ(got.size(), want.size()) << name;
    double diff = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      diff += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
      norm += static_cast<double>(want[i]) * want[i];
    }
    // The floor: a parameter near 0 after training (a conv bias ahead of BatchNorm, whose true
    // gradient is 0) holds only each back-end's rounding noise, which is compared absolutely.
    EXPECT_LE(std::sqrt(diff), 1e-3 * std::max(1e-2, std::sqrt(norm)))
        << g.name() << ": parameter " << name << " after " << kSteps << " steps";
  }
}

// Compiled and checked without a GPU: `tessera train nmt|ocr --device cuda` finds a CUDA kernel
// for every op of the jobs' models.
TEST(CudaTrainingTest, EveryOpOfTheJobsModelsHasACudaKernel) {
  std::vector<bool> cuda(graph::AllOpKinds().size() + 1, false);
  for (const OpCoverage& row : KernelCoverage()) cuda[static_cast<size_t>(row.kind)] = row.cuda;
  for (const char* model : {"nmt", "ocr"}) {
    const graph::Graph g = *graph::zoo::BuildZooModel(model, 4);
    for (const graph::Node& node : g.nodes()) {
      EXPECT_TRUE(cuda[static_cast<size_t>(node.kind)])
          << model << ": node '" << node.name << "' (" << graph::OpName(node.kind) << ")";
    }
  }
}

TEST(CudaTrainingTest, MlpTrainsAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const graph::Graph g = fixtures::TwoLayerMlp({.batch = 32, .hidden = 64, .classes = 10});
  RandomDataSource source(g, {.seed = 9, .classes = 10});
  ExpectSameTraining(g, Batches(source), OptimizerKind::kMomentum, 0.05);
}

TEST(CudaTrainingTest, NmtTrainsAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const graph::Graph g = *graph::zoo::BuildZooModel("nmt", 16);
  const std::unique_ptr<jobs::TrainingJob> job = jobs::nmt::MakeNmtJob({.seed = 1});
  auto source = job->TrainingData(g);
  ASSERT_TRUE(source.ok()) << source.status();
  ExpectSameTraining(g, Batches(**source), OptimizerKind::kAdam, 0.003);
}

TEST(CudaTrainingTest, OcrTrainsAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const graph::Graph g = *graph::zoo::BuildZooModel("ocr", 8);
  const std::unique_ptr<jobs::TrainingJob> job = jobs::ocr::MakeOcrJob({.seed = 1});
  auto source = job->TrainingData(g);
  ASSERT_TRUE(source.ok()) << source.status();
  // Momentum, not Adam: the conv biases ahead of BatchNorm have a true gradient of 0, and Adam
  // divides their rounding noise by its own size into full steps of +-lr in random directions
  // (the first GPU run, docs/gpu.md). Momentum keeps noise the size of noise.
  ExpectSameTraining(g, Batches(**source), OptimizerKind::kMomentum, 0.05);
}

}  // namespace
}  // namespace tessera::exec
