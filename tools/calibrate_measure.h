// What `tessera calibrate` measures on this machine: one device's peak FLOP/s and streaming
// bandwidth, Tessera's own CPU kernels per op class (forward and backward, at CPU-sized
// shapes), the framework's cost per op, the thread back-end's ring collectives, and what a
// collective overlapping compute costs the compute.
//
//   MeasureOptions o{.threads = 1, .quick = false};
//   TS_ASSIGN_OR_RETURN(double peak, MeasurePeakFlops(o));           // FLOP/s of a large GEMM
//   double bandwidth = MeasureBandwidth(o);                           // bytes/s of a triad
//   TS_ASSIGN_OR_RETURN(std::vector<KernelSample> kernels, MeasureKernels(o));
//   TS_ASSIGN_OR_RETURN(double overhead, MeasureOpOverhead(o));       // seconds per op
//   TS_ASSIGN_OR_RETURN(std::vector<CommSample> comm, MeasureCollectives(o, /*ranks=*/2));
//   TS_ASSIGN_OR_RETURN(double slowdown, MeasureOverlapSlowdown(o, 2, cluster));  // with its link
//   MachineInfo m = ReadMachineInfo();                                // cores, RAM, CPU model
//
// Every time is the fastest of several repetitions: the machine's speed when nothing else
// runs (other processes only ever slow a repetition down). Kernels of a one-thread device are
// timed in this thread's CPU time, which time spent descheduled by other processes does not
// count; with more threads, and for collectives (whose waits are part of their time), in wall
// time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/tools/calibrate_fit.h"

namespace tessera::tools {

struct MeasureOptions {
  int threads = 1;     // intra-op threads of one device (one worker)
  bool quick = false;  // smaller shapes and fewer repetitions (a few seconds in all)
};

// Seconds on the clock kernels are timed with: this thread's CPU time when
// options.threads == 1, else a monotonic wall clock. Only differences are meaningful.
double KernelClockSeconds(const MeasureOptions& options);

struct MachineInfo {
  int cores = 1;             // std::thread::hardware_concurrency (at least 1)
  int64_t memory_bytes = 0;  // MemTotal of /proc/meminfo; 0 when unreadable
  std::string cpu_model;     // "model name" of /proc/cpuinfo, or "unknown CPU"
};
MachineInfo ReadMachineInfo();

// FLOP/s of Tessera's single-precision GEMM (OpenBLAS) on a large square product with
// `threads` threads: the best of several runs.
absl::StatusOr<double> MeasurePeakFlops(const MeasureOptions& options);
// Bytes/s of a streaming triad a = b + s * c (12 bytes per element) over arrays larger than
// one core's L2 cache, split over `threads` threads: the best of several runs.
double MeasureBandwidth(const MeasureOptions& options);

// The sample kernels of every op class (docs/clusters.md lists them), each timed forward and
// backward with the CPU kernels as a training step runs them (every floating input needs a
// gradient unless it is a data input of the model).
absl::StatusOr<std::vector<KernelSample>> MeasureKernels(const MeasureOptions& options);

// Seconds a training step (exec::TrainingProgram) spends per OpTime call beyond the kernels'
// work: a step of a chain of tiny ops divided by the OpTime calls the planner makes for it.
absl::StatusOr<double> MeasureOpOverhead(const MeasureOptions& options);

// All-reduce and all-gather on `ranks` threads of the thread back-end, at sizes from 4 KiB to
// 16 MiB (--quick: 4 MiB).
absl::StatusOr<std::vector<CommSample>> MeasureCollectives(const MeasureOptions& options,
                                                           int ranks);

// Seconds of compute a device loses per second of all-reduce that overlaps it
// (Efficiency::overlap_slowdown): on `ranks` threads of the thread back-end, a GEMM loop on
// one thread per rank beside all-reduces of 4 MiB on cold buffers, against the loop alone and
// the seconds `cluster`'s link prices the all-reduces at. In [0, kMaxOverlapSlowdown].
absl::StatusOr<double> MeasureOverlapSlowdown(const MeasureOptions& options, int ranks,
                                              const costmodel::ClusterSpec& cluster);

}  // namespace tessera::tools
