// How much compute a device loses to a collective that overlaps it (Efficiency::
// overlap_slowdown): as a data-parallel worker all-reduces its gradient buckets during
// backward, each rank of the thread back-end runs a GEMM loop on one thread while its rank
// thread all-reduces gradient-sized buffers, cold in the cache as gradients are after
// backward. The time the pair takes beyond the GEMM loop alone, divided by the seconds the
// fitted link model gives those all-reduces, is the slowdown the step simulator applies.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

#include "tessera/base/median.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/collective_cost.h"
#include "tessera/costmodel/efficiency.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/tools/calibrate_measure.h"

namespace tessera::tools {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kN = 256;                   // GEMM size: compute-bound, a fraction of a millisecond
constexpr int64_t kBytes = 4 << 20;       // one all-reduce: a bucket of the CPU-sized models
constexpr int kBuffers = 16;              // 64 MiB per rank: past the caches, as gradients are

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Matrices {
  std::vector<float> a = std::vector<float>(kN * kN, 0.5f), b = a, c = a;
};

// `iterations` GEMMs; wall seconds.
double ComputeLoop(Matrices& m, int iterations) {
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    exec::cpu::Gemm<float>(false, false, kN, kN, kN, 1.f, m.a.data(), kN, m.b.data(), kN, 0.f,
                           m.c.data(), kN);
  }
  return Seconds(start, Clock::now());
}

}  // namespace

absl::StatusOr<double> MeasureOverlapSlowdown(const MeasureOptions& options, int ranks,
                                              const costmodel::ClusterSpec& cluster) {
  // The GEMM loop lasts about `loop_s` alone; the all-reduces take an eighth of it in the link
  // model, so they overlap the loop as the buckets overlap backward.
  const double loop_s = options.quick ? 0.02 : 0.06;
  Matrices probe;
  ComputeLoop(probe, 2);  // warm-up
  const double gemm_s = std::max(1e-6, ComputeLoop(probe, 4) / 4);
  const int iterations = std::max(4, static_cast<int>(loop_s / gemm_s));
  const int64_t count = std::max<int64_t>(ranks, kBytes / 4 / ranks * ranks);
  std::vector<int> group(ranks);
  std::iota(group.begin(), group.end(), 0);
  const double model_s = costmodel::CollectiveSeconds(
      costmodel::Collective::kAllReduce, static_cast<double>(count * 4), group,
      cluster.WithDevices(ranks));
  if (!(model_s > 0)) {
    return absl::InternalError("the fitted link prices an all-reduce at 0 s; cannot measure "
                               "the overlap against it");
  }
  const int calls = std::max(1, static_cast<int>(iterations * gemm_s / 8 / model_s));
  const int repeats = options.quick ? 3 : 7;  // the first warms up
  std::vector<double> slowdowns;              // rank 0's, one per repeat
  TS_RETURN_IF_ERROR(comm::RunOnThreads(ranks, [&](comm::Communicator& c) -> absl::Status {
    std::vector<std::vector<float>> buffers(kBuffers, std::vector<float>(count, 1.f));
    Matrices m;
    for (int repeat = 0; repeat < repeats; ++repeat) {
      TS_RETURN_IF_ERROR(c.Barrier());
      const double alone = ComputeLoop(m, iterations);
      TS_RETURN_IF_ERROR(c.Barrier());
      const Clock::time_point start = Clock::now();
      Clock::time_point compute_end;
      std::thread compute([&] {
        ComputeLoop(m, iterations);
        compute_end = Clock::now();
      });
      absl::Status status;
      for (int k = 0; k < calls && status.ok(); ++k) {
        for (float& x : buffers[k % kBuffers]) x = 1.f;  // as backward writes the gradients
        status = c.AllReduce(buffers[k % kBuffers], comm::ReduceOp::kSum);
      }
      const Clock::time_point comm_end = Clock::now();
      compute.join();
      TS_RETURN_IF_ERROR(status);
      const double together = Seconds(start, std::max(compute_end, comm_end));
      if (c.rank() == 0 && repeat > 0) {
        slowdowns.push_back((together - alone) / (calls * model_s));
      }
    }
    return absl::OkStatus();
  }));
  return std::clamp(base::Median(std::move(slowdowns)), 0.0, costmodel::kMaxOverlapSlowdown);
}

}  // namespace tessera::tools
