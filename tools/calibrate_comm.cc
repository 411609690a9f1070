// The thread back-end's collectives: all-reduce and all-gather on a few threads of this
// process, from a few KiB (latency) to 16 MiB (bandwidth; the gradients of the CPU-sized
// models are a few MiB). From 1 MiB on, the calls rotate over 64 MiB of buffers, so that they
// read memory as a gradient bucket does after backward, not a cache-warm buffer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"
#include "tessera/tools/calibrate_measure.h"

namespace tessera::tools {
namespace {

using costmodel::Collective;

// One collective of `bytes` (as CostModel::CollectiveTime counts them) on this rank.
absl::Status RunOnce(comm::Communicator& c, Collective kind, std::vector<float>& data,
                     std::vector<float>& gathered) {
  if (kind == Collective::kAllReduce) return c.AllReduce(data, comm::ReduceOp::kSum);
  const int64_t shard = static_cast<int64_t>(gathered.size()) / c.size();
  return c.AllGather(comm::ConstDataView(data.data(), shard, comm::DType::kFloat32), gathered);
}

// Every rank times `runs` batches of `calls` back-to-back collectives; rank 0 keeps the
// seconds per call of the fastest batch (the least disturbed by other work on the machine). Every rank makes the same calls in the same order.
absl::Status TimeCollective(comm::Communicator& c, Collective kind, int64_t bytes, int runs,
                            std::vector<CommSample>& samples) {
  const int64_t count = std::max<int64_t>(c.size(), bytes / 4 / c.size() * c.size());
  // Buffers of 1 MiB and more rotate over 64 MiB, so that each call finds its data cold in the
  // cache, as a gradient bucket is after backward; smaller ones (the latency regime) stay warm.
  const int buffers = count * 4 >= (int64_t{1} << 20)
                          ? static_cast<int>(std::max<int64_t>(1, (int64_t{64} << 20) / (count * 4)))
                          : 1;
  std::vector<std::vector<float>> data(buffers, std::vector<float>(count, 1.f));
  std::vector<float> gathered(kind == Collective::kAllGather ? count : 0);
  const int calls = static_cast<int>(std::clamp<int64_t>((int64_t{8} << 20) / (count * 4), 1, 50));
  double best = 1e30;
  int next = 0;
  for (int run = 0; run <= runs; ++run) {  // run 0 warms up
    TS_RETURN_IF_ERROR(c.Barrier());
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < calls; ++k) {
      TS_RETURN_IF_ERROR(RunOnce(c, kind, data[next], gathered));
      next = (next + 1) % buffers;
    }
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run > 0) best = std::min(best, t / calls);
  }
  if (c.rank() == 0) {
    samples.push_back({.kind = kind, .ranks = c.size(), .bytes = static_cast<double>(count * 4),
                       .measured_s = best});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<CommSample>> MeasureCollectives(const MeasureOptions& options,
                                                           int ranks) {
  const std::vector<int64_t> sizes =
      options.quick ? std::vector<int64_t>{4 << 10, 256 << 10, 4 << 20}
                    : std::vector<int64_t>{4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20};
  const int runs = options.quick ? 3 : 9;
  std::vector<CommSample> samples;  // written by rank 0 only
  TS_RETURN_IF_ERROR(comm::RunOnThreads(ranks, [&](comm::Communicator& c) -> absl::Status {
    for (Collective kind : {Collective::kAllReduce, Collective::kAllGather}) {
      for (int64_t bytes : sizes) TS_RETURN_IF_ERROR(TimeCollective(c, kind, bytes, runs, samples));
    }
    return absl::OkStatus();
  }));
  return samples;
}

}  // namespace tessera::tools
