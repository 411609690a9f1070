// tessera-bench-comm: all-reduce bandwidth of our pipelined ring against the peer of each
// back-end, in the style of nccl-tests (bytes, time, algbw, busbw), in one run:
//   tessera-bench-comm --comm thread --ranks 4        ring on threads vs a plain memcpy
//   mpiexec -n 4 tessera-bench-comm --comm mpi        ring over MPI vs MPICH's MPI_Allreduce
// Options: --min-bytes B --max-bytes B (powers of 4 between), --iters N (0: by size),
// --chunk-bytes B (0: automatic), --json (one object per row, rank 0 only), --naive (adds a
// row "naive": every rank sends to rank 0, which sums and sends the result back to each),
// --op all-to-all (Communicator::AllToAll of `bytes` per rank in place of the all-reduce; the
// peer is MPI_Alltoall over MPI, the same memcpy on threads).
//
// algbw = bytes / time; busbw = algbw * 2 (P - 1) / P, the per-rank link traffic of a ring
// all-reduce, so it is comparable across P (all-to-all: algbw * (P - 1) / P). The memcpy row:
// every rank-thread copies `bytes` between two buffers of its own at the same time, so its
// busbw (= algbw) is the memory bandwidth each rank gets when all ranks use memory at once, the
// ceiling for the thread ring.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#ifdef TESSERA_HAVE_MPI
#include <mpi.h>
#endif

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/str_format.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"

namespace {

using tessera::comm::Backend;
using tessera::comm::BackendName;
using tessera::comm::Communicator;
using tessera::comm::ReduceOp;

struct Args {
  Backend backend = Backend::kThread;
  int ranks = 2;
  int64_t min_bytes = 1 << 10;
  int64_t max_bytes = 64 << 20;
  int iters = 0;
  int64_t chunk_bytes = 0;
  bool json = false;
  bool naive = false;
  bool all_to_all = false;
};

constexpr char kUsage[] =
    "usage: tessera-bench-comm [options]\n"
    "       mpiexec -n P tessera-bench-comm --comm mpi [options]\n\n"
    "All-reduce (or all-to-all) bandwidth of Tessera's ring against the back-end's own\n"
    "collective, nccl-tests style: bytes, time, algbw, busbw (docs/communication.md).\n\n"
    "options:\n"
    "  --comm thread|mpi         back-end (default: thread)\n"
    "  --ranks N                 ranks (threads); ignored with --comm mpi (default: 2)\n"
    "  --min-bytes B             smallest message, at least 4 (default: 1024)\n"
    "  --max-bytes B             largest message; sizes go up by 4x (default: 67108864)\n"
    "  --iters N                 timed runs per size (default: 0, by size: 512 MiB / bytes,\n"
    "                            5 to 200)\n"
    "  --chunk-bytes B           ring chunk (default: 0, automatic)\n"
    "  --op all-reduce|all-to-all  the collective (default: all-reduce)\n"
    "  --json                    one JSON object per row (rank 0 only)\n"
    "  --naive                   add a row where every rank sends to rank 0, which sums and\n"
    "                            sends the result back\n"
    "  -h, --help                show this help\n\n"
    "exit codes: 0 ok, 1 a back-end or collective error, 2 usage error.\n";

// nullopt: run; otherwise the exit code (0 after --help, 2 after a usage error).
std::optional<int> ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&](int64_t& out) {
      return i + 1 < argc && absl::SimpleAtoi(argv[++i], &out) && out >= 0;
    };
    int64_t v = 0;
    const absl::string_view next = i + 1 < argc ? argv[i + 1] : "";
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (flag == "--json") {
      args.json = true;
    } else if (flag == "--naive") {
      args.naive = true;
    } else if (flag == "--op" && (next == "all-reduce" || next == "all-to-all")) {
      args.all_to_all = next == "all-to-all";
      ++i;
    } else if (flag == "--comm" && tessera::comm::ParseBackend(next).ok()) {
      args.backend = *tessera::comm::ParseBackend(argv[++i]);
    } else if (flag == "--ranks" && value(v) && v >= 1) {
      args.ranks = static_cast<int>(v);
    } else if (flag == "--min-bytes" && value(v) && v >= 4) {
      args.min_bytes = v;
    } else if (flag == "--max-bytes" && value(v) && v >= 4) {
      args.max_bytes = v;
    } else if (flag == "--iters" && value(v)) {
      args.iters = static_cast<int>(v);
    } else if (flag == "--chunk-bytes" && value(v)) {
      args.chunk_bytes = v;
    } else {
      std::fprintf(stderr,
                   "tessera-bench-comm: bad or incomplete option: %s (see 'tessera-bench-comm "
                   "--help')\n",
                   flag.c_str());
      return 2;
    }
  }
  return std::nullopt;
}

int ItersFor(const Args& args, int64_t bytes) {
  if (args.iters > 0) return args.iters;
  return static_cast<int>(std::clamp<int64_t>((int64_t{512} << 20) / bytes, 5, 200));
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The slowest rank's time per operation.
absl::StatusOr<double> SlowestRank(Communicator& comm, double seconds) {
  std::vector<int64_t> ns = {static_cast<int64_t>(seconds * 1e9)};
  TS_RETURN_IF_ERROR(comm.AllReduce(ns, ReduceOp::kMax));
  return ns[0] * 1e-9;
}

void PrintRow(const Args& args, Communicator& comm, const char* impl, int64_t bytes, double t) {
  if (comm.rank() != 0) return;
  const int p = comm.size();
  const double algbw = bytes / t / 1e9;
  const double busbw = std::string(impl) == "memcpy" ? algbw
                       : args.all_to_all           ? algbw * (p - 1) / p
                                                   : algbw * 2.0 * (p - 1) / p;
  if (args.json) {
    std::printf("{\"backend\": \"%s\", \"impl\": \"%s\", \"op\": \"%s\", \"ranks\": %d, "
                "\"bytes\": %lld, \"time_s\": %.9g, \"algbw_gbs\": %.6g, \"busbw_gbs\": %.6g}\n",
                BackendName(args.backend).data(), impl,
                args.all_to_all ? "all_to_all" : "all_reduce", p,
                static_cast<long long>(bytes), t, algbw, busbw);
  } else {
    std::printf("%12lld  %-8s  %12.1f  %10.3f  %10.3f\n", static_cast<long long>(bytes), impl,
                t * 1e6, algbw, busbw);
  }
  std::fflush(stdout);
}

absl::StatusOr<double> TimeOurs(const Args& args, Communicator& comm, std::vector<float>& data,
                                std::vector<float>& out, int iters) {
  auto once = [&] {
    return args.all_to_all ? comm.AllToAll(data, out) : comm.AllReduce(data, ReduceOp::kSum);
  };
  TS_RETURN_IF_ERROR(once());  // warm-up
  TS_RETURN_IF_ERROR(comm.Barrier());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) TS_RETURN_IF_ERROR(once());
  return SlowestRank(comm, Seconds(start, std::chrono::steady_clock::now()) / iters);
}

absl::StatusOr<double> TimePeer(const Args& args, Communicator& comm, std::vector<float>& data,
                                std::vector<float>& out, int iters) {
  if (args.backend == Backend::kMpi) {
#ifdef TESSERA_HAVE_MPI
    auto once = [&] {
      if (args.all_to_all) {
        const int block = static_cast<int>(data.size()) / comm.size();
        return MPI_Alltoall(data.data(), block, MPI_FLOAT, out.data(), block, MPI_FLOAT,
                            MPI_COMM_WORLD);
      }
      return MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT,
                           MPI_SUM, MPI_COMM_WORLD);
    };
    once();
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      if (once() != MPI_SUCCESS) return absl::InternalError("the MPI collective failed");
    }
    return SlowestRank(comm, Seconds(start, std::chrono::steady_clock::now()) / iters);
#else
    return absl::UnimplementedError("built without MPI");
#endif
  }
  std::vector<float> copy(data.size());
  std::memcpy(copy.data(), data.data(), data.size() * sizeof(float));  // warm-up, page-in
  TS_RETURN_IF_ERROR(comm.Barrier());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    std::memcpy(i % 2 ? data.data() : copy.data(), i % 2 ? copy.data() : data.data(),
                data.size() * sizeof(float));
  }
  return SlowestRank(comm, Seconds(start, std::chrono::steady_clock::now()) / iters);
}

// The textbook alternative: reduce to rank 0 over point-to-point, then send the sum to each.
absl::Status NaiveAllReduce(Communicator& comm, std::vector<float>& data, std::vector<float>& tmp) {
  if (comm.rank() != 0) {
    TS_RETURN_IF_ERROR(comm.Send(data, 0, 1));
    return comm.Recv(data, 0, 2);
  }
  for (int peer = 1; peer < comm.size(); ++peer) {
    TS_RETURN_IF_ERROR(comm.Recv(tmp, peer, 1));
    for (size_t i = 0; i < data.size(); ++i) data[i] += tmp[i];
  }
  for (int peer = 1; peer < comm.size(); ++peer) TS_RETURN_IF_ERROR(comm.Send(data, peer, 2));
  return absl::OkStatus();
}

absl::StatusOr<double> TimeNaive(Communicator& comm, std::vector<float>& data, int iters) {
  std::vector<float> tmp(data.size());
  TS_RETURN_IF_ERROR(NaiveAllReduce(comm, data, tmp));
  TS_RETURN_IF_ERROR(comm.Barrier());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) TS_RETURN_IF_ERROR(NaiveAllReduce(comm, data, tmp));
  return SlowestRank(comm, Seconds(start, std::chrono::steady_clock::now()) / iters);
}

absl::Status RunRank(const Args& args, Communicator& comm) {
  if (comm.rank() == 0 && !args.json) {
    std::printf("# tessera-bench-comm: %s float32, backend %s, %d ranks; peer: %s\n",
                args.all_to_all ? "all-to-all" : "all-reduce sum",
                BackendName(args.backend).data(), comm.size(),
                args.backend == Backend::kMpi
                    ? (args.all_to_all ? "MPICH MPI_Alltoall" : "MPICH MPI_Allreduce")
                    : "memcpy per rank");
    std::printf("%12s  %-8s  %12s  %10s  %10s\n", "bytes", "impl", "time(us)", "algbw(GB/s)",
                "busbw(GB/s)");
  }
  for (int64_t bytes = args.min_bytes; bytes <= args.max_bytes; bytes *= 4) {
    const int64_t floats = bytes / sizeof(float);
    // The all-to-all needs P equal blocks; the all-reduce takes any count, as before.
    std::vector<float> data(args.all_to_all ? floats / comm.size() * comm.size() : floats, 1.0f);
    std::vector<float> out(args.all_to_all ? data.size() : 0);
    const int iters = ItersFor(args, bytes);
    TS_ASSIGN_OR_RETURN(const double ours, TimeOurs(args, comm, data, out, iters));
    PrintRow(args, comm, "tessera", bytes, ours);
    TS_ASSIGN_OR_RETURN(const double peer, TimePeer(args, comm, data, out, iters));
    PrintRow(args, comm, args.backend == Backend::kMpi ? "mpich" : "memcpy", bytes, peer);
    if (args.naive && !args.all_to_all) {
      TS_ASSIGN_OR_RETURN(const double naive, TimeNaive(comm, data, iters));
      PrintRow(args, comm, "naive", bytes, naive);
    }
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (std::optional<int> code = ParseArgs(argc, argv, args)) return *code;
  tessera::comm::CommOptions options;
  options.backend = args.backend;
  options.chunk_bytes = args.chunk_bytes;
  std::unique_ptr<tessera::comm::MpiSession> mpi;
  if (args.backend == Backend::kMpi) {
    auto session = tessera::comm::MpiSession::Start(&argc, &argv);
    if (!session.ok()) {
      std::fprintf(stderr, "tessera-bench-comm: %s\n", session.status().ToString().c_str());
      return 1;
    }
    mpi = *std::move(session);
  }
  const absl::Status status = tessera::comm::RunRanks(
      options, args.ranks, [&](Communicator& comm) { return RunRank(args, comm); });
  if (!status.ok()) {
    std::fprintf(stderr, "tessera-bench-comm: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
