// Device and cluster specs: presets from published hardware figures and JSON
// cluster files (docs/clusters.md gives the format and every figure's source).
//
//   TS_ASSIGN_OR_RETURN(ClusterSpec c, LoadCluster("v100-vpc32"));   // a preset or a file path
//   LoadCluster("local");   // this machine, as `tessera calibrate` measured it (LocalClusterPath())
//   ClusterSpec sixty_four = c.WithDevices(64);   // 8 nodes of 8 devices, placed in order
//   sixty_four.NodeOf(17);                        // 2
//   sixty_four.device.peak_flops(DType::kF16);    // 125e12
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/costmodel/efficiency.h"
#include "tessera/costmodel/op_times.h"
#include "tessera/graph/dtype.h"

namespace tessera::costmodel {

struct DeviceSpec {
  std::string name;             // "V100-SXM2-16GB"
  double peak_flops_f32 = 0;    // FLOP/s
  double peak_flops_f16 = 0;    // FLOP/s (tensor cores where the device has them)
  double peak_flops_bf16 = 0;   // FLOP/s; 0 when unsupported
  int64_t memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s
  // Peak FLOP/s for `dtype` (integer types use the f32 figure; f16/bf16 fall
  // back to the f32 figure when their own is 0, i.e. unsupported).
  double peak_flops(graph::DType dtype) const;
  bool operator==(const DeviceSpec&) const = default;
};

// One direction of a link, as one device (intra-node) or one node (inter-node) sees it.
struct LinkSpec {
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // seconds per message
  bool operator==(const LinkSpec&) const = default;
};

struct ClusterSpec {
  std::string name;
  int devices_per_node = 1;
  int nodes = 1;
  DeviceSpec device;
  LinkSpec intra_node;    // device to device inside a node (per device)
  LinkSpec inter_node;    // node to node (per node; shared by the node's devices)
  double price_per_device_hour = 0;  // USD
  std::string source;     // where the figures come from
  // 0 when every node is full; else the device count when the last node holds
  // fewer than devices_per_node (set by WithDevices, "devices" in JSON).
  int partial_devices = 0;
  // Measured fractions of peak per op class (`tessera calibrate`); absent in the
  // presets, where RooflineCostModel uses the Efficiency{} defaults.
  std::optional<Efficiency> efficiency;
  // Op times of models measured on this device, by OpTimesKey (op_times.h): `tessera train`
  // stores them in the `local` cluster so that the same command plans the same plan.
  std::map<std::string, MeasuredOpTimes> op_times;

  int devices() const { return partial_devices > 0 ? partial_devices : devices_per_node * nodes; }
  // Devices are placed on nodes in order: device d is on node d / devices_per_node.
  int NodeOf(int device) const { return device / devices_per_node; }
  // The same hardware with `devices` (>= 1; may exceed devices()) devices: full
  // nodes in order, the last one holding the remainder (a single node of
  // `devices` devices when devices <= devices_per_node). For 12 devices of 8
  // per node: devices_per_node 8, nodes 2, partial_devices 12, devices() 12.
  ClusterSpec WithDevices(int devices) const;
  bool operator==(const ClusterSpec&) const = default;
};

// Names of the built-in presets: m40-pcie, v100-vpc32, v100-ib100, h100-dgx.
std::vector<std::string> ClusterPresetNames();
// NotFound listing the presets when `name` is not one.
absl::StatusOr<ClusterSpec> ClusterPreset(absl::string_view name);
// The name under which LoadCluster finds the cluster `tessera calibrate` wrote.
inline constexpr absl::string_view kLocalClusterName = "local";
// Where `tessera calibrate` writes the `local` cluster and LoadCluster("local")
// reads it: $TESSERA_LOCAL_CLUSTER when set (non-empty), else
// $XDG_CONFIG_HOME/tessera/local.json, else $HOME/.config/tessera/local.json;
// empty when none of the three variables is set.
std::string LocalClusterPath();
// A preset name, "local" (LocalClusterPath(); NotFound saying to run `tessera
// calibrate` when that file does not exist), or a path to a cluster JSON file.
absl::StatusOr<ClusterSpec> LoadCluster(const std::string& name_or_path);
// Cluster JSON (docs/clusters.md); errors name `source_name` and the field.
absl::StatusOr<ClusterSpec> ClusterFromJson(absl::string_view text, absl::string_view source_name);
std::string ClusterToJson(const ClusterSpec& cluster);

}  // namespace tessera::costmodel
