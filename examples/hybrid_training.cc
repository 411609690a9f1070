// The C++ API end to end: build a model, plan it for N workers, train it with the hybrid
// runtime and print predicted against measured step time and bytes.
//   build/bin/tessera_hybrid_example [WORKERS]             # threads of this process
//   mpiexec -n 2 build/bin/tessera_hybrid_example 2 mpi    # MPI ranks
//   build/bin/tessera_hybrid_example 2 nccl                # CUDA build: one GPU per worker
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/comm/launch.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/graph/builder.h"

using namespace tessera;

int main(int argc, char** argv) {
  const int workers = argc > 1 ? std::atoi(argv[1]) : 2;
  const absl::StatusOr<comm::Backend> backend = comm::ParseBackend(argc > 2 ? argv[2] : "thread");
  if (!backend.ok()) {
    std::fprintf(stderr, "%s\n", backend.status().ToString().c_str());
    return 2;
  }
  auto mpi = *backend == comm::Backend::kMpi ? comm::MpiSession::Start(&argc, &argv) : nullptr;

  graph::GraphBuilder b("classifier");  // a wide output layer: worth splitting
  graph::Value x = b.Input("features", {64, 256});
  graph::Value labels = b.Input("labels", {64}, graph::DType::kI64);
  graph::Value h = b.Linear(x, 512, "hidden").Relu();
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 4096, "vocab"), labels, "loss"));
  absl::StatusOr<graph::Graph> g = std::move(b).Build();

  absl::StatusOr<partitioner::Plan> plan =
      g.ok() ? exec::PlanForWorkers(*g, workers, "v100-vpc32") : g.status();
  absl::StatusOr<exec::HybridRun> run =
      plan.ok() ? exec::TrainHybrid(*g, *plan, {.backend = *backend, .workers = workers,
                                                .worker = {.steps = 10, .lr = 0.1}})
                : plan.status();
  if (!run.ok()) {
    std::fprintf(stderr, "%s\n", run.status().ToString().c_str());
    return 1;
  }
  if (run->is_rank0) std::printf("%s", exec::RunReportTable(run->report).c_str());
  return 0;
}
