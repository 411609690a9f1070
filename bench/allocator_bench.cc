// Google Benchmark: alloc/free throughput of the caching allocator against glibc malloc/free,
// in the same run, on the same seeded training-like trace of requests.
//   build/bin/tessera_bench_allocator
//   build/bin/tessera_bench_allocator --benchmark_repetitions=5   (table from the medians)
// The trace: per step, 200 tensors allocated in order (90% small 256 B-64 KiB, 9% medium
// 1-16 MiB, 1% large 64-256 MiB, log-uniform within each range); after each allocation, with
// probability 0.1, one earlier live tensor of the step is freed at random; at the end of the
// step the rest are freed in reverse order (a stack, as backward releases activations).
// The `/1` variants use only the small sizes. Memory is never touched (it stands for device
// memory), so both sides pay only for bookkeeping and system calls. After the runs, a table
// gives malloc time / caching time per mix (> 1 means the caching allocator is faster).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessera/base/check.h"
#include "tessera/memory/caching_allocator.h"

namespace {

using tessera::memory::CachingAllocator;
using tessera::memory::HostMemory;

struct Op {
  bool allocate;
  int32_t slot;   // index into the live-pointer table
  int64_t bytes;  // when allocating
};

constexpr int kSteps = 16;
constexpr int kTensorsPerStep = 200;

int64_t LogUniform(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  return static_cast<int64_t>(std::exp(u(rng)));
}

std::vector<Op> MakeTrace(bool small_only, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Op> ops;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<int32_t> live;  // slots live in this step, in allocation order
    for (int32_t t = 0; t < kTensorsPerStep; ++t) {
      const int kind = small_only ? 0 : static_cast<int>(rng() % 100);
      int64_t bytes = kind < 90   ? LogUniform(rng, 256, 64 << 10)
                      : kind < 99 ? LogUniform(rng, 1 << 20, 16 << 20)
                                  : LogUniform(rng, 64 << 20, 256 << 20);
      ops.push_back({true, t, bytes});
      live.push_back(t);
      if (rng() % 10 == 0 && live.size() > 1) {
        const size_t victim = rng() % (live.size() - 1);  // not the one just made
        ops.push_back({false, live[victim], 0});
        live.erase(live.begin() + static_cast<int64_t>(victim));
      }
    }
    for (auto it = live.rbegin(); it != live.rend(); ++it) ops.push_back({false, *it, 0});
  }
  return ops;
}

const std::vector<Op>& Trace(bool small_only) {
  static const std::vector<Op> mix = MakeTrace(false, 7);
  static const std::vector<Op> small = MakeTrace(true, 7);
  return small_only ? small : mix;
}

void BM_Malloc(benchmark::State& state) {
  const std::vector<Op>& ops = Trace(state.range(0) == 1);
  std::vector<void*> slots(kTensorsPerStep, nullptr);
  for (auto _ : state) {
    for (const Op& op : ops) {
      if (op.allocate) {
        slots[op.slot] = std::malloc(static_cast<size_t>(op.bytes));
        TS_CHECK(slots[op.slot] != nullptr);
      } else {
        std::free(slots[op.slot]);
      }
    }
    benchmark::DoNotOptimize(slots.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ops.size()));
}

void BM_CachingAllocator(benchmark::State& state) {
  const std::vector<Op>& ops = Trace(state.range(0) == 1);
  HostMemory host;
  CachingAllocator allocator(host);  // warm after the first iteration: the steady state
  std::vector<void*> slots(kTensorsPerStep, nullptr);
  for (auto _ : state) {
    for (const Op& op : ops) {
      if (op.allocate) {
        absl::StatusOr<void*> p = allocator.Allocate(op.bytes);
        TS_CHECK(p.ok()) << p.status();
        slots[op.slot] = *p;
      } else {
        absl::Status status = allocator.Free(slots[op.slot]);
        TS_CHECK(status.ok()) << status;
      }
    }
    benchmark::DoNotOptimize(slots.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ops.size()));
  const auto stats = allocator.stats();
  state.counters["reserved_MiB"] = static_cast<double>(stats.peak_bytes_reserved) / (1 << 20);
  state.counters["peak_in_use_MiB"] = static_cast<double>(stats.peak_bytes_in_use) / (1 << 20);
  state.counters["segments"] = static_cast<double>(stats.num_segment_allocs);
}

// Args: 0 = the training mix, 1 = small sizes only.
BENCHMARK(BM_Malloc)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CachingAllocator)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Remembers each run's time per iteration to print the ratio table at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      // With --benchmark_repetitions the median (reported after the repetitions) wins.
      if (run.run_type == Run::RT_Iteration || run.aggregate_name == "median") {
        times_[run.run_name.str()] = run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void PrintRatios() const {
    std::printf("\n%-8s %14s %14s %16s\n", "mix", "malloc_us", "caching_us", "malloc/caching");
    for (const auto& [arg, label] : {std::pair{"0", "training"}, std::pair{"1", "small"}}) {
      auto m = times_.find(std::string("BM_Malloc/") + arg);
      auto c = times_.find(std::string("BM_CachingAllocator/") + arg);
      if (m == times_.end() || c == times_.end()) continue;
      std::printf("%-8s %14.1f %14.1f %16.2f\n", label, m->second, c->second,
                  m->second / c->second);
    }
  }

 private:
  std::map<std::string, double> times_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
