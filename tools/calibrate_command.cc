// tessera calibrate: measure, fit, print the tables, write the `local` cluster file.
#include "tessera/tools/calibrate_command.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/collective_cost.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/tools/cli/arg_parser.h"

namespace tessera::tools {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

std::string Source(const Calibration& c, const CalibrateOptions& o) {
  return absl::StrCat(
      "measured by tessera calibrate", o.quick ? " --quick" : "", " on ",
      absl::FormatTime("%Y-%m-%d", absl::Now(), absl::UTCTimeZone()), ", ", c.machine.cpu_model,
      " (", c.machine.cores, " cores); one device = ", c.threads,
      " thread(s) of Tessera's CPU kernels; peak: single-precision GEMM (raised to the fastest "
      "compute-bound sample class if that was faster), bandwidth: streaming triad; links: the "
      "thread back-end's ring all-reduce and all-gather on ",
      o.comm_ranks, " ranks; overlap_slowdown: a GEMM loop beside all-reduces on cold buffers; "
      "OpenBLAS kernels: ", exec::cpu::BlasKernelsInUse().running, " (",
      exec::cpu::BlasKernelsInUse().why, ")");
}

// The `local` cluster from the measurements.
costmodel::ClusterSpec LocalCluster(const Calibration& c, const CalibrateOptions& o,
                                    const costmodel::DeviceSpec& device,
                                    const costmodel::LinkSpec& link, int devices) {
  costmodel::ClusterSpec cluster;
  cluster.name = std::string(costmodel::kLocalClusterName);
  cluster.devices_per_node = devices;
  cluster.nodes = 1;
  cluster.device = device;
  cluster.intra_node = link;
  cluster.inter_node = link;  // one node: never used, but the format requires it
  cluster.price_per_device_hour = 0;
  cluster.source = Source(c, o);
  cluster.efficiency = c.fit.efficiency;
  return cluster;
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(const CalibrateOptions& options) {
  Calibration c;
  c.machine = ReadMachineInfo();
  const int devices = options.devices > 0 ? options.devices : c.machine.cores;
  c.threads = std::max(1, c.machine.cores / devices);
  const MeasureOptions m{.threads = c.threads, .quick = options.quick};
  TS_ASSIGN_OR_RETURN(c.gemm_flops, MeasurePeakFlops(m));
  c.triad_bandwidth = MeasureBandwidth(m);
  TS_ASSIGN_OR_RETURN(c.kernels, MeasureKernels(m));
  TS_ASSIGN_OR_RETURN(const double overhead, MeasureOpOverhead(m));
  TS_ASSIGN_OR_RETURN(c.collectives, MeasureCollectives(m, std::max(2, options.comm_ranks)));
  TS_ASSIGN_OR_RETURN(const costmodel::LinkSpec link, FitLink(c.collectives));

  costmodel::DeviceSpec device;
  device.name = absl::StrCat(c.machine.cpu_model, c.threads == 1 ? " core" : " cores",
                             c.threads == 1 ? "" : absl::StrCat(" x", c.threads));
  device.peak_flops_f32 = c.gemm_flops;
  device.memory_bandwidth = c.triad_bandwidth;  // kept as measured (FitEfficiencyRaisingPeak)
  device.memory_bytes = c.machine.memory_bytes > 0
                            ? std::max<int64_t>(1, c.machine.memory_bytes / devices)
                            : kGiB;
  c.fit = FitEfficiencyRaisingPeak(c.kernels, device, overhead);
  c.cluster = LocalCluster(c, options, device, link, devices);
  TS_ASSIGN_OR_RETURN(c.cluster.efficiency->overlap_slowdown,
                      MeasureOverlapSlowdown(m, std::max(2, options.comm_ranks), c.cluster));
  // What is written must read back: the same validation as any cluster file.
  TS_RETURN_IF_ERROR(
      costmodel::ClusterFromJson(costmodel::ClusterToJson(c.cluster), "calibrated cluster")
          .status());
  return c;
}

namespace {

std::string Bytes(double b) {
  if (b >= (1 << 20)) return absl::StrFormat("%.0f MiB", b / (1 << 20));
  return absl::StrFormat("%.0f KiB", b / 1024);
}

std::string Device(const Calibration& c) {
  const costmodel::ClusterSpec& k = c.cluster;
  const costmodel::Efficiency& e = *k.efficiency;
  return absl::StrFormat(
      "cluster local: %d devices of %d thread(s) on %s (%d cores)\n"
      "device: peak %.1f GFLOP/s (GEMM measured %.1f), bandwidth %.1f GB/s (triad measured "
      "%.1f), memory %.1f GiB\n"
      "OpenBLAS kernels: %s (%s)\n"
      "overhead: %.2f us per op (a training step of tiny ops)\n"
      "link: latency %.2f us, bandwidth %.2f GB/s (thread back-end)\n"
      "overlap: compute loses %.2f s per second of all-reduce beside it\n\n",
      k.devices_per_node, c.threads, c.machine.cpu_model, c.machine.cores,
      k.device.peak_flops_f32 / 1e9, c.gemm_flops / 1e9, k.device.memory_bandwidth / 1e9,
      c.triad_bandwidth / 1e9, static_cast<double>(k.device.memory_bytes) / kGiB,
      exec::cpu::BlasKernelsInUse().running, exec::cpu::BlasKernelsInUse().why,
      e.op_overhead_s * 1e6, k.intra_node.latency * 1e6, k.intra_node.bandwidth / 1e9,
      e.overlap_slowdown);
}

std::string Collectives(const Calibration& c) {
  std::string text = absl::StrFormat("%-16s %5s %9s %12s %12s %7s\n", "collective", "ranks",
                                     "bytes", "measured us", "model us", "error");
  for (const CommSample& s : c.collectives) {
    std::vector<int> group(s.ranks);
    for (int r = 0; r < s.ranks; ++r) group[r] = r;
    const double model =
        costmodel::CollectiveSeconds(s.kind, s.bytes, group, c.cluster.WithDevices(s.ranks));
    absl::StrAppendFormat(&text, "%-16s %5d %9s %12.1f %12.1f %+6.1f%%\n",
                          costmodel::CollectiveName(s.kind), s.ranks, Bytes(s.bytes),
                          s.measured_s * 1e6, model * 1e6, 100 * (model / s.measured_s - 1));
  }
  return text + "\n";
}

std::string Kernels(const Calibration& c) {
  const costmodel::RooflineCostModel model(c.cluster);
  const double overhead = c.cluster.efficiency->op_overhead_s;
  std::string text = absl::StrFormat("%-13s %-30s %8s %8s %8s %8s %11s %9s %7s\n", "class",
                                     "sample (fwd + bwd)", "MFLOP", "MB", "fwd ms", "bwd ms",
                                     "measured ms", "model ms", "error");
  for (const KernelSample& s : c.kernels) {
    const double measured = s.measured_s() + overhead * static_cast<double>(s.work.size());
    const double predicted = PredictedSeconds(s, model);
    double flops = 0, bytes = 0;
    for (const costmodel::OpWork& w : s.work) flops += w.flops, bytes += w.bytes;
    absl::StrAppendFormat(&text, "%-13s %-30s %8.1f %8.2f %8.3f %8.3f %11.3f %9.3f %+6.1f%%\n",
                          graph::OpClassName(s.op_class), s.label, flops / 1e6, bytes / 1e6,
                          s.forward_s * 1e3, s.backward_s * 1e3, measured * 1e3,
                          predicted * 1e3, 100 * (predicted / measured - 1));
  }
  absl::StrAppendFormat(&text, "\n%-13s %-9s %9s %11s %11s %7s\n", "class", "bound", "fraction",
                        "measured ms", "model ms", "error");
  for (int i = 0; i < costmodel::kOpClassCount; ++i) {
    const ClassFit& f = c.fit.classes[i];
    if (f.samples == 0) continue;
    const costmodel::Efficiency& e = *c.cluster.efficiency;
    absl::StrAppendFormat(&text, "%-13s %-9s %9.3f %11.3f %11.3f %+6.1f%%%s\n",
                          graph::OpClassName(static_cast<graph::OpClass>(i)),
                          f.compute_bound ? "flops" : "bandwidth",
                          f.compute_bound ? e.flops[i] : e.bandwidth[i], f.measured_s * 1e3,
                          f.predicted_s * 1e3, 100 * (f.predicted_s / f.measured_s - 1),
                          f.clamped ? "  (clamped: faster than the roofline at a fraction of 1)"
                                    : "");
  }
  return text;
}

}  // namespace

std::string CalibrationReport(const Calibration& c) {
  return Device(c) + Collectives(c) + Kernels(c);
}

absl::Status WriteClusterFile(const std::string& path, const costmodel::ClusterSpec& cluster,
                              bool make_folder) {
  if (make_folder) {
    std::error_code ignored;  // a failure shows in the write's own error
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  }
  return base::WriteFileAtomically(path, costmodel::ClusterToJson(cluster), "cluster file");
}

int RunCalibrate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string output;
  int64_t devices = 0;
  bool quick = false;
  ArgParser p("tessera calibrate",
              "Measures this machine for the planner: peak FLOP/s and memory bandwidth of one\n"
              "device (a worker's share of the cores), Tessera's CPU kernels per op class, the\n"
              "cost per op of a training step, and the thread back-end's collectives; writes\n"
              "the `local` cluster file (docs/clusters.md) that `--cluster local` reads.");
  p.AddString("-o", "FILE", "write the cluster here", &output)
      .Default("$TESSERA_LOCAL_CLUSTER, else $XDG_CONFIG_HOME/tessera/local.json, else "
               "~/.config/tessera/local.json");
  p.AddInt("--devices", "N", "devices (workers) of the cluster", &devices, 1)
      .Default("one per core");
  p.AddFlag("--quick", "smaller shapes and fewer repetitions (a few seconds; less accurate)",
            &quick);
  p.SetEpilog(
      "examples:\n"
      "  tessera calibrate\n"
      "  tessera calibrate --quick -o local.json\n"
      "  tessera plan MODEL --devices 2 --cluster local\n\n"
      "exit codes: 0 ok, 1 measurement or file error, 2 usage error.");
  if (std::optional<int> code = p.ParseOrExitCode(args, out, err)) return *code;
  if (devices > 4096) {
    err << "tessera calibrate: --devices " << devices << " is more than 4096\n";
    return 2;
  }
  const bool default_path = output.empty();
  if (default_path) output = costmodel::LocalClusterPath();
  if (output.empty()) {
    err << "tessera calibrate: none of TESSERA_LOCAL_CLUSTER, XDG_CONFIG_HOME, HOME is set; "
           "pass -o FILE\n";
    return 2;
  }
  err << "tessera calibrate: measuring (" << (quick ? "a few seconds" : "about half a minute")
      << ")...\n";
  const CalibrateOptions options{.devices = static_cast<int>(devices), .quick = quick};
  absl::StatusOr<Calibration> c = Calibrate(options);
  if (!c.ok()) {
    err << "tessera calibrate: " << c.status().message() << "\n";
    return 1;
  }
  out << CalibrationReport(*c);
  if (absl::Status s = WriteClusterFile(output, c->cluster, default_path); !s.ok()) {
    err << "tessera calibrate: " << s.message() << "\n";
    return 1;
  }
  out << "\nwrote " << output << "\n";
  return 0;
}

}  // namespace tessera::tools
