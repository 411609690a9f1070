// Google Benchmark: the static offset planner on real training traces: the transient values of
// each zoo model's training step (memory/lifetime.h), alone and as k micro-batches accumulated
// in one step (k forward+backward passes one after the other), giving 1k to 20k buffers.
//   build/bin/tessera_bench_zoo_traces
//   build/bin/tessera_bench_zoo_traces --benchmark_filter=transformer
// Counters: buffers, arena_over_lower_bound, greedy_over_lower_bound, checker_ok (1 when the
// independent checker passed).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/graph/zoo/zoo.h"
#include "tessera/memory/lifetime.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/memory/offset_planner.h"

namespace {

using tessera::memory::Buffer;

// The step's transient buffers, repeated for `micro` micro-batches: copy j runs after copy j-1,
// so its buffers are shifted by the length of one forward+backward pass.
std::vector<Buffer> ZooTrace(const std::string& model, int64_t batch, int micro) {
  auto graph = tessera::graph::zoo::BuildZooModel(model, batch);
  if (!graph.ok()) return {};
  auto lifetimes = tessera::memory::AnalyzeTrainingLifetimes(*graph, {});
  if (!lifetimes.ok()) return {};
  const std::vector<Buffer> one = tessera::memory::TransientBuffers(*lifetimes);
  int64_t span = 0, ids = 0;
  for (const Buffer& b : one) span = std::max(span, b.end), ids = std::max(ids, b.id + 1);
  std::vector<Buffer> all;
  for (int j = 0; j < micro; ++j) {
    for (Buffer b : one) {
      b.id += j * ids;
      b.start += j * span;
      b.end += j * span;
      all.push_back(b);
    }
  }
  return all;
}

void BM_ZooTrace(benchmark::State& state, const std::string& model, int micro) {
  const std::vector<Buffer> buffers = ZooTrace(model, 32, micro);
  if (buffers.empty()) {
    state.SkipWithError("could not build the trace");
    return;
  }
  tessera::memory::OffsetPlan plan, greedy;
  for (auto _ : state) {
    plan = *tessera::memory::PlanOffsets(buffers, {.time_limit_s = 1.0});
  }
  greedy = *tessera::memory::PlanOffsets(buffers, {.greedy_only = true});
  const double lb = static_cast<double>(plan.lower_bound);
  state.counters["buffers"] = static_cast<double>(buffers.size());
  state.counters["arena_over_lower_bound"] = plan.arena_bytes / lb;
  state.counters["greedy_over_lower_bound"] = greedy.arena_bytes / lb;
  state.counters["checker_ok"] = tessera::memory::CheckOffsets(buffers, plan).ok() ? 1 : 0;
}

void RegisterAll() {
  for (const char* model : {"alexnet", "vgg16", "resnet50", "gnmt", "crnn", "transformer"}) {
    for (int micro : {1, 4, 16, 44}) {
      benchmark::RegisterBenchmark(
          (std::string("ZooTrace/") + model + "/micro:" + std::to_string(micro)).c_str(),
          [model, micro](benchmark::State& s) { BM_ZooTrace(s, model, micro); })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
