// One device of this machine: peak FLOP/s (Tessera's GEMM), streaming bandwidth (a triad),
// and the facts read from /proc (cores, memory, CPU model).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/tools/calibrate_measure.h"

namespace tessera::tools {
namespace {

// The value after "key:" on the first line of `path` that starts with `key`, or "".
std::string ProcField(const std::string& path, absl::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, key)) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
}

// One pass of the triad over [begin, end).
void Triad(float* __restrict a, const float* __restrict b, const float* __restrict c,
           int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 0.5f * c[i];
}

// `passes` triads over the arrays split across `threads` threads.
void TriadPasses(std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                 int threads, int passes) {
  const int64_t n = static_cast<int64_t>(a.size());
  auto work = [&](int t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    for (int p = 0; p < passes; ++p) {
      Triad(a.data(), b.data(), c.data(), begin, end);
      asm volatile("" ::: "memory");  // every pass really writes `a`
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
}

}  // namespace

double KernelClockSeconds(const MeasureOptions& options) {
  if (options.threads == 1) {
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) return t.tv_sec + 1e-9 * t.tv_nsec;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

MachineInfo ReadMachineInfo() {
  MachineInfo m;
  m.cores = std::max(1u, std::thread::hardware_concurrency());
  m.cpu_model = ProcField("/proc/cpuinfo", "model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  // "MemTotal:       24576000 kB"
  const std::vector<std::string> parts =
      absl::StrSplit(ProcField("/proc/meminfo", "MemTotal"), ' ', absl::SkipEmpty());
  int64_t kib = 0;
  if (!parts.empty() && absl::SimpleAtoi(parts[0], &kib) && kib > 0) m.memory_bytes = kib * 1024;
  return m;
}

absl::StatusOr<double> MeasurePeakFlops(const MeasureOptions& options) {
  const int64_t n = options.quick ? 512 : 1024;
  const int runs = options.quick ? 3 : 5;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  exec::cpu::SetBlasThreads(options.threads);
  double best = 0;
  for (int run = 0; run <= runs; ++run) {  // run 0 warms up
    const double start = KernelClockSeconds(options);
    exec::cpu::Gemm<float>(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    const double seconds = KernelClockSeconds(options) - start;
    if (run > 0 && seconds > 0) best = std::max(best, 2.0 * n * n * n / seconds);
  }
  if (!(best > 0)) {
    return absl::InternalError("timing a GEMM gave no positive time; the clock is unusable");
  }
  return best;
}

double MeasureBandwidth(const MeasureOptions& options) {
  // 3 arrays of 4 MiB: past one core's L2, about the size of the CPU-sized models' tensors.
  const int64_t n = int64_t{1} << 20;
  const int threads = std::max(1, options.threads);
  const int runs = options.quick ? 5 : 20, passes = 4;
  std::vector<float> a(n, 0.f), b(n, 1.f), c(n, 2.f);
  double best = 0;
  for (int run = 0; run <= runs; ++run) {  // run 0 warms up (and faults the pages in)
    const double start = KernelClockSeconds(options);
    TriadPasses(a, b, c, threads, passes);  // one thread: on this one, so its CPU time counts
    const double seconds = KernelClockSeconds(options) - start;
    if (run > 0 && seconds > 0) best = std::max(best, 12.0 * n * passes / seconds);
  }
  return best;
}

}  // namespace tessera::tools
