// Google Benchmark: the static offset planner against plain greedy-by-size best-fit, in the same
// run, on the 11 MiniMalloc challenging cases (../shared/data/minimalloc), on random traces of
// 1k and 10k buffers, and on training-like traces (forward activations kept for backward).
//   build/bin/tessera_bench_offsets
//   build/bin/tessera_bench_offsets --benchmark_filter=MiniMalloc
// The planner runs 3 times per MiniMalloc case (mean, median and spread reported), with a time
// limit of 1 s and of 0.25 s.
// Counters: arena_over_best_known (MiniMalloc: arena / 1,048,576), arena_over_lower_bound,
// arena_bytes, lower_bound, greedy_arena_over_lower_bound.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tessera/memory/buffer_csv.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/memory/offset_planner.h"

namespace {

using tessera::memory::Buffer;
using tessera::memory::OffsetPlan;
using tessera::memory::OffsetPlanOptions;

constexpr double kBestKnown = 1048576.0;

std::vector<Buffer> LoadCase(const std::string& name) {
  const std::string path =
      std::string(TESSERA_SOURCE_DIR) + "/../shared/data/minimalloc/" + name + ".1048576.csv";
  absl::StatusOr<tessera::memory::BufferTable> table = tessera::memory::ReadBufferCsv(path);
  return table.ok() ? table->buffers : std::vector<Buffer>{};
}

// Random lifetimes and sizes over 4 * n / 10 steps.
std::vector<Buffer> RandomTrace(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Buffer> buffers;
  const int64_t horizon = std::max<int64_t>(10, 4 * n / 10);
  for (int i = 0; i < n; ++i) {
    const int64_t start = std::uniform_int_distribution<int64_t>(0, horizon)(rng);
    const int64_t length = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    const int64_t size = 256 * std::uniform_int_distribution<int64_t>(1, 4096)(rng);
    buffers.push_back(
        {.id = i, .start = start, .end = start + length, .size = size, .alignment = 256});
  }
  return buffers;
}

// A training step of `layers` layers, 4 buffers each: the activation (live from its forward step
// to its backward step), a forward temporary, the activation gradient and a backward temporary.
std::vector<Buffer> TrainingTrace(int layers, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Buffer> buffers;
  const int64_t backward_end = 2 * layers;
  for (int l = 0; l < layers; ++l) {
    const int64_t act = 256 * std::uniform_int_distribution<int64_t>(64, 16384)(rng);
    const int64_t tmp = 256 * std::uniform_int_distribution<int64_t>(16, 4096)(rng);
    const int64_t id = 4 * l;
    buffers.push_back(
        {.id = id, .start = l, .end = backward_end - l, .size = act, .alignment = 256});
    buffers.push_back({.id = id + 1, .start = l, .end = l + 1, .size = tmp, .alignment = 256});
    buffers.push_back({.id = id + 2,
                       .start = backward_end - l - 1,
                       .end = backward_end - l + 1,
                       .size = act,
                       .alignment = 256});
    buffers.push_back({.id = id + 3,
                       .start = backward_end - l - 1,
                       .end = backward_end - l,
                       .size = tmp,
                       .alignment = 256});
  }
  return buffers;
}

void Plan(benchmark::State& state, const std::vector<Buffer>& buffers,
          const OffsetPlanOptions& options, double best_known) {
  if (buffers.empty()) {
    state.SkipWithError("MiniMalloc cases not found beside the repo");
    return;
  }
  OffsetPlan plan;
  for (auto _ : state) {
    plan = *tessera::memory::PlanOffsets(buffers, options);
    benchmark::DoNotOptimize(plan.arena_bytes);
  }
  if (!tessera::memory::CheckOffsets(buffers, plan).ok()) {
    state.SkipWithError("the checker rejected the plan");
    return;
  }
  state.counters["arena_bytes"] = double(plan.arena_bytes);
  state.counters["lower_bound"] = double(plan.lower_bound);
  state.counters["arena_over_lower_bound"] = double(plan.arena_bytes) / plan.lower_bound;
  state.counters["greedy_arena_over_lower_bound"] =
      double(plan.greedy_arena_bytes) / plan.lower_bound;
  if (best_known > 0) state.counters["arena_over_best_known"] = plan.arena_bytes / best_known;
  state.counters["buffers"] = double(buffers.size());
}

void RegisterAll() {
  const OffsetPlanOptions greedy = {.greedy_only = true};
  // The planner stops early once its arena is proven optimal; otherwise it runs to the limit.
  const OffsetPlanOptions tessera = {.time_limit_s = 1.0};
  const OffsetPlanOptions quarter = {.time_limit_s = 0.25};
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
    std::vector<Buffer> buffers = LoadCase(name);
    benchmark::RegisterBenchmark((std::string("MiniMalloc/") + name + "/greedy").c_str(),
                                 [=](benchmark::State& s) { Plan(s, buffers, greedy, kBestKnown); })
        ->Unit(benchmark::kMillisecond);
    for (const auto& [suffix, options] : {std::pair{"/tessera", tessera},
                                          std::pair{"/tessera_0.25s", quarter}}) {
      benchmark::RegisterBenchmark(
          (std::string("MiniMalloc/") + name + suffix).c_str(),
          [=](benchmark::State& s) { Plan(s, buffers, options, kBestKnown); })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
  }
  // Large traces: the improvement search is given 0.1 s at most.
  const OffsetPlanOptions bounded = {.time_limit_s = 0.08};
  for (int n : {1000, 10000}) {
    std::vector<Buffer> random = RandomTrace(n, 7);
    std::vector<Buffer> training = TrainingTrace(n / 4, 7);
    for (const auto& [kind, buffers] :
         {std::pair{"Random", random}, std::pair{"Training", training}}) {
      const std::string base = std::string(kind) + "/" + std::to_string(n);
      benchmark::RegisterBenchmark((base + "/greedy").c_str(), [=](benchmark::State& s) {
        Plan(s, buffers, greedy, 0);
      })->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((base + "/tessera").c_str(),
                                   [=](benchmark::State& s) { Plan(s, buffers, bounded, 0); })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
