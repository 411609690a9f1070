// The built-in cluster presets, from published hardware figures. Every figure's
// source is given beside it and in docs/clusters.md (keep the two in step).
//
// Units: FLOP/s, bytes, bytes/s (one direction), seconds, USD per device-hour.
// Memory sizes are the data sheets' "GB" taken as GiB (the capacity of the
// memory chips; drivers reserve a few hundred MiB of it).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
// Presets describe the largest cluster `tessera recommend` considers (1024
// devices); planners size them down with WithDevices.
constexpr int kMaxDevices = 1024;

// NVIDIA Tesla M40 12 GB nodes, 4 per node on PCIe 3.0 x16, 10 Gbit/s Ethernet.
ClusterSpec M40Pcie() {
  ClusterSpec c;
  c.name = "m40-pcie";
  c.devices_per_node = 4;  // one x16 slot per GPU in a 2-socket server
  c.nodes = kMaxDevices / c.devices_per_node;
  c.device.name = "Tesla-M40-12GB";
  c.device.peak_flops_f32 = 7.0e12;   // NVIDIA Tesla M40 data sheet: 7 TFLOPS single precision
  c.device.peak_flops_f16 = 7.0e12;   // Maxwell GM200 has no fast f16: the f32 rate
  c.device.peak_flops_bf16 = 0;       // unsupported (falls back to the f32 figure)
  c.device.memory_bytes = 12 * kGiB;  // data sheet: 12 GB GDDR5
  c.device.memory_bandwidth = 288e9;  // data sheet: 288 GB/s
  // PCIe 3.0 x16: 8 GT/s x 16 lanes x 128/130 = 15.75 GB/s raw per direction
  // (PCI-SIG); ~12 GB/s is what CUDA's bandwidthTest measures; ~10 us per transfer.
  c.intra_node = {.bandwidth = 12e9, .latency = 10e-6};
  // 10 Gbit/s Ethernet (IEEE 802.3ae) = 1.25 GB/s; ~50 us per TCP message.
  c.inter_node = {.bandwidth = 1.25e9, .latency = 50e-6};
  // No major cloud rented M40s on demand; AWS p2.xlarge (one K80 GK210, the
  // contemporary Kepler/Maxwell-era cloud GPU) was published at $0.90/h.
  c.price_per_device_hour = 0.90;
  c.source =
      "NVIDIA Tesla M40 data sheet (7 TFLOPS f32, 12 GB, 288 GB/s); PCI-SIG PCIe 3.0 x16 "
      "(15.75 GB/s raw, ~12 GB/s effective); IEEE 802.3ae 10 GbE (1.25 GB/s); price: AWS "
      "p2.xlarge on-demand $0.90/h as a proxy (see docs/clusters.md)";
  return c;
}

// 8 x V100-SXM2 16 GB per node over NVLink 2 (AWS p3.16xlarge-like).
ClusterSpec V100Node(std::string name) {
  ClusterSpec c;
  c.name = std::move(name);
  c.devices_per_node = 8;
  c.nodes = kMaxDevices / c.devices_per_node;
  c.device.name = "V100-SXM2-16GB";
  c.device.peak_flops_f32 = 15.7e12;   // NVIDIA V100 data sheet (SXM2): 15.7 TFLOPS single
  c.device.peak_flops_f16 = 125e12;    // data sheet: 125 TFLOPS tensor performance
  c.device.peak_flops_bf16 = 0;        // Volta has no bf16 (falls back to f32)
  c.device.memory_bytes = 16 * kGiB;   // data sheet: 16 GB HBM2
  c.device.memory_bandwidth = 900e9;   // data sheet: 900 GB/s
  // NVLink 2: 6 links x 25 GB/s per direction = 150 GB/s per GPU per direction
  // (data sheet: 300 GB/s bidirectional); a few us per message.
  c.intra_node = {.bandwidth = 150e9, .latency = 3e-6};
  return c;
}

ClusterSpec V100Vpc32() {
  ClusterSpec c = V100Node("v100-vpc32");
  // A 32 Gbit/s VPC network (DESIGN.md) = 4 GB/s per node; ~40 us per TCP message
  // inside one cloud region.
  c.inter_node = {.bandwidth = 4e9, .latency = 40e-6};
  // AWS p3.16xlarge on-demand (us-east-1): $24.48/h for 8 GPUs.
  c.price_per_device_hour = 24.48 / 8;
  c.source =
      "NVIDIA V100 data sheet, SXM2 (15.7 TFLOPS f32, 125 TFLOPS tensor, 16 GB, 900 GB/s, "
      "NVLink 300 GB/s bidirectional); 32 Gbit/s VPC (4 GB/s); price: AWS p3.16xlarge "
      "on-demand $24.48/h per 8 GPUs";
  return c;
}

ClusterSpec V100Ib100() {
  ClusterSpec c = V100Node("v100-ib100");
  // 100 Gbit/s EDR InfiniBand (Mellanox ConnectX-5) = 12.5 GB/s; ~2 us MPI latency.
  c.inter_node = {.bandwidth = 12.5e9, .latency = 2e-6};
  // AWS p3dn.24xlarge (8 x V100 with a 100 Gbit/s network) on-demand: $31.212/h.
  c.price_per_device_hour = 31.212 / 8;
  c.source =
      "NVIDIA V100 data sheet, SXM2 (as v100-vpc32); 100 Gbit/s EDR InfiniBand, Mellanox "
      "ConnectX-5 (12.5 GB/s, ~2 us); price: AWS p3dn.24xlarge on-demand $31.212/h per 8 GPUs";
  return c;
}

// DGX H100-like: 8 x H100 SXM5 80 GB over NVLink 4, 8 x 400 Gbit/s InfiniBand.
ClusterSpec H100Dgx() {
  ClusterSpec c;
  c.name = "h100-dgx";
  c.devices_per_node = 8;
  c.nodes = kMaxDevices / c.devices_per_node;
  c.device.name = "H100-SXM5-80GB";
  c.device.peak_flops_f32 = 67e12;     // NVIDIA H100 data sheet (SXM): 67 TFLOPS FP32
  c.device.peak_flops_f16 = 989e12;    // data sheet: 1,979 TFLOPS FP16 tensor with sparsity;
  c.device.peak_flops_bf16 = 989e12;   // half of it dense, for FP16 and BF16 alike
  c.device.memory_bytes = 80 * kGiB;   // data sheet: 80 GB HBM3
  c.device.memory_bandwidth = 3.35e12; // data sheet: 3.35 TB/s
  // NVLink 4: 900 GB/s bidirectional per GPU (data sheet) = 450 GB/s per direction.
  c.intra_node = {.bandwidth = 450e9, .latency = 2e-6};
  // 8 x ConnectX-7 400 Gbit/s NDR InfiniBand per node (DGX H100 user guide) =
  // 3.2 Tbit/s = 400 GB/s per node; ~3 us through the switches.
  c.inter_node = {.bandwidth = 400e9, .latency = 3e-6};
  // AWS p5.48xlarge on-demand (us-east-1): $98.32/h for 8 GPUs.
  c.price_per_device_hour = 98.32 / 8;
  c.source =
      "NVIDIA H100 data sheet, SXM (67 TFLOPS f32, 989 TFLOPS dense f16/bf16 tensor, 80 GB, "
      "3.35 TB/s, NVLink 900 GB/s bidirectional); DGX H100 user guide (8 x 400 Gbit/s "
      "ConnectX-7 InfiniBand); price: AWS p5.48xlarge on-demand $98.32/h per 8 GPUs";
  return c;
}

}  // namespace

std::vector<std::string> ClusterPresetNames() {
  return {"m40-pcie", "v100-vpc32", "v100-ib100", "h100-dgx"};
}

absl::StatusOr<ClusterSpec> ClusterPreset(absl::string_view name) {
  if (name == "m40-pcie") return M40Pcie();
  if (name == "v100-vpc32") return V100Vpc32();
  if (name == "v100-ib100") return V100Ib100();
  if (name == "h100-dgx") return H100Dgx();
  return absl::NotFoundError(absl::StrCat("unknown cluster preset \"", name,
                                          "\"; presets: ", absl::StrJoin(ClusterPresetNames(), ", ")));
}

}  // namespace tessera::costmodel
