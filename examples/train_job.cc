// Trains one of the training jobs (jobs/: "nmt" or "ocr") through the C++ API: the zoo model,
// an executable plan for 2 workers, the job's data on the hybrid runtime's one training loop,
// then the job's held-out metrics. What `tessera train nmt` does, without its options.
//
//   tessera_train_job_example nmt 200     # 200 steps on 2 worker threads
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/exec/hybrid_training.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/job_registry.h"

using namespace tessera;

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "nmt";
  const int64_t steps = argc > 2 ? std::atoll(argv[2]) : 100;
  const std::unique_ptr<jobs::TrainingJob> job = jobs::JobFor(name, /*seed=*/1);
  if (job == nullptr || steps < 1) {
    std::fprintf(stderr, "usage: %s nmt|ocr [STEPS >= 1]\n", argv[0]);
    return 2;
  }
  const jobs::JobDefaults defaults = jobs::DefaultsFor(name);
  absl::StatusOr<graph::Graph> g = graph::zoo::BuildZooModel(name);
  absl::StatusOr<partitioner::Plan> plan =
      g.ok() ? exec::PlanForWorkers(*g, 2, "v100-vpc32") : g.status();
  exec::HybridRunOptions options{.workers = 2};
  options.worker = {.steps = steps, .seed = 1, .lr = defaults.lr,
                    .optimizer = {.kind = costmodel::OptimizerKind::kAdam}};
  options.data_source = [&job](const graph::Graph& graph) { return job->TrainingData(graph); };
  absl::StatusOr<exec::HybridRun> run =
      plan.ok() ? exec::TrainHybrid(*g, *plan, options) : plan.status();
  absl::StatusOr<jobs::Evaluation> eval =
      run.ok() ? job->Evaluate({&*g, &run->parameters, &run->buffers}, {.batches = 4})
               : run.status();
  if (!eval.ok()) {
    std::fprintf(stderr, "%s\n", eval.status().ToString().c_str());
    return 1;
  }
  std::printf("%s: %lld steps, final loss %.4f\n", name.c_str(), static_cast<long long>(steps),
              run->report.losses.back());
  for (const auto& [metric, value] : eval->metrics) {
    std::printf("  %s %.4f\n", metric.c_str(), value);
  }
  for (const std::string& line : eval->samples) std::printf("  %s\n", line.c_str());
  return 0;
}
