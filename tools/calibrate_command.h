// `tessera calibrate`: measures this machine (one device = one worker's share of the CPU
// cores) and writes the `local` cluster file the planner reads with `--cluster local`.
//
//   tessera calibrate                          # writes costmodel::LocalClusterPath()
//   tessera calibrate --quick -o local.json    # a few seconds; any path
//   tessera plan MODEL --devices 2 --cluster local
//
//   TS_ASSIGN_OR_RETURN(Calibration c, Calibrate({.devices = 2}));
//   std::string json = costmodel::ClusterToJson(c.cluster);
//   std::cout << CalibrationReport(c);
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/tools/calibrate_fit.h"
#include "tessera/tools/calibrate_measure.h"

namespace tessera::tools {

struct CalibrateOptions {
  int devices = 0;     // devices of the cluster (workers); 0: one per core
  bool quick = false;  // MeasureOptions::quick
  int comm_ranks = 2;  // threads the collectives are timed on
};

// Everything measured, and the cluster built from it.
struct Calibration {
  MachineInfo machine;
  int threads = 1;  // intra-op threads per device: max(1, cores / devices)
  double gemm_flops = 0, triad_bandwidth = 0;  // as measured (the cluster's may be raised)
  std::vector<KernelSample> kernels;
  EfficiencyFit fit;
  std::vector<CommSample> collectives;
  costmodel::ClusterSpec cluster;  // "local": one node of `devices` devices
};

// Measures everything (seconds to tens of seconds) and fits the cluster. Errors name what
// could not be measured.
absl::StatusOr<Calibration> Calibrate(const CalibrateOptions& options);

// The tables of what was measured against what the fitted cluster predicts.
std::string CalibrationReport(const Calibration& calibration);

// Writes `cluster` as a cluster file at `path`, atomically; `make_folder` first creates the
// folders above it (the default `local` path). Errors name the path.
absl::Status WriteClusterFile(const std::string& path, const costmodel::ClusterSpec& cluster,
                              bool make_folder);

// tessera calibrate [-o FILE] [--devices N] [--quick]; 0 ok, 1 measurement or file error,
// 2 usage error.
int RunCalibrate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::tools
