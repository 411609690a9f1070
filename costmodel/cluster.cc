// DeviceSpec and ClusterSpec helpers, and LoadCluster (a preset, the `local` cluster, or a file).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/check.h"
#include "tessera/base/file_io.h"
#include "tessera/base/setting_error.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

// Cluster files are a few hundred bytes; anything past this is not one.
constexpr int64_t kMaxClusterFileBytes = int64_t{1} << 20;

std::string PresetList() { return absl::StrJoin(ClusterPresetNames(), ", "); }

// The whole file, or an error naming the path (NotFound lists the presets,
// since a mistyped preset name lands here too).
absl::StatusOr<std::string> ReadClusterFile(const std::string& path) {
  absl::StatusOr<std::string> text =
      base::ReadFileText(path, "cluster file", kMaxClusterFileBytes);
  if (text.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("cluster '", path,
                                            "' is neither a preset nor an existing file; presets: ",
                                            PresetList()));
  }
  return text;
}

// The `local` cluster's file, or NotFound saying how to create it.
absl::StatusOr<ClusterSpec> LoadLocalCluster() {
  const std::string path = LocalClusterPath();
  if (path.empty()) {
    return base::SettingError(
        absl::NotFoundError(
            "cluster 'local': no place to look for it (none of TESSERA_LOCAL_CLUSTER, "
            "XDG_CONFIG_HOME, HOME is set); set TESSERA_LOCAL_CLUSTER, or load a calibrated "
            "cluster file by its path"),
        "cluster");
  }
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return absl::NotFoundError(absl::StrCat(
        "cluster 'local' has not been measured on this machine: run `tessera calibrate` first "
        "(it writes ", path, ")"));
  }
  TS_ASSIGN_OR_RETURN(const std::string text, base::ReadFileText(path, "cluster file",
                                                                 kMaxClusterFileBytes));
  return ClusterFromJson(text, path);
}

std::string EnvOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

std::string LocalClusterPath() {
  if (std::string path = EnvOrEmpty("TESSERA_LOCAL_CLUSTER"); !path.empty()) return path;
  if (std::string config = EnvOrEmpty("XDG_CONFIG_HOME"); !config.empty()) {
    return (std::filesystem::path(config) / "tessera" / "local.json").string();
  }
  if (std::string home = EnvOrEmpty("HOME"); !home.empty()) {
    return (std::filesystem::path(home) / ".config" / "tessera" / "local.json").string();
  }
  return "";
}

double DeviceSpec::peak_flops(graph::DType dtype) const {
  switch (dtype) {
    case graph::DType::kF16:
      return peak_flops_f16 > 0 ? peak_flops_f16 : peak_flops_f32;
    case graph::DType::kBF16:
      return peak_flops_bf16 > 0 ? peak_flops_bf16 : peak_flops_f32;
    default:
      return peak_flops_f32;
  }
}

ClusterSpec ClusterSpec::WithDevices(int devices) const {
  TS_CHECK(devices >= 1) << "WithDevices(" << devices << "): callers validate the count";
  TS_CHECK(devices_per_node >= 1) << "cluster '" << name << "' has no devices per node";
  ClusterSpec result = *this;
  result.partial_devices = 0;
  if (devices <= devices_per_node) {
    result.devices_per_node = devices;
    result.nodes = 1;
    return result;
  }
  // Full nodes in order; the last node holds the remainder.
  result.nodes = (devices + devices_per_node - 1) / devices_per_node;
  if (devices % devices_per_node != 0) result.partial_devices = devices;
  return result;
}

absl::StatusOr<ClusterSpec> LoadCluster(const std::string& name_or_path) {
  for (const std::string& preset : ClusterPresetNames()) {
    if (preset == name_or_path) return ClusterPreset(preset);
  }
  if (name_or_path == kLocalClusterName) return LoadLocalCluster();
  if (name_or_path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no cluster given; name a preset (", PresetList(), ") or a cluster JSON file"));
  }
  TS_ASSIGN_OR_RETURN(const std::string text, ReadClusterFile(name_or_path));
  return ClusterFromJson(text, name_or_path);
}

}  // namespace tessera::costmodel
