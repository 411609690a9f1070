// Cluster JSON files (docs/clusters.md): strict reading with the source and the
// field path in every error, and writing that reads back to the same spec.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/json_reader.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/op_times_json_impl.h"

namespace tessera::costmodel {
namespace {

using base::JsonField;
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Bounds past which a figure is a typo, not hardware.
constexpr int64_t kMaxDevices = 1000000;
constexpr double kMaxFlops = 1e18;      // 1 EFLOP/s per device
constexpr double kMaxBytes = 1e15;      // 1 PB of device memory
constexpr double kMaxBandwidth = 1e15;  // 1 PB/s
constexpr double kMaxLatency = 10;      // seconds
constexpr double kMaxPrice = 1e6;       // USD per device-hour
constexpr double kMaxOverhead = 1;     // seconds per op

// A cluster file nests 3 deep; anything deeper is garbage, refused before parsing.
constexpr base::JsonFormat kJsonFormat = {.expected = "a Tessera cluster file (a JSON object)",
                                          .max_nesting = 16};

// Member `key` of `r` as a number in [min, max], or in (min, max] when `min_exclusive`.
absl::StatusOr<double> Number(const JsonField& r, absl::string_view key, double min,
                              bool min_exclusive, double max) {
  TS_ASSIGN_OR_RETURN(const JsonField f, r.Member(key));
  return min_exclusive ? f.NumberAbove(min, max) : f.NumberInRange(min, max);
}

// Member `key` of `r` as an integer in [min, max]; integral floating values (1.6e10), as
// people write hardware figures, are accepted.
absl::StatusOr<int64_t> Integer(const JsonField& r, absl::string_view key, int64_t min,
                                int64_t max) {
  TS_ASSIGN_OR_RETURN(const JsonField f, r.Member(key));
  return f.IntInRange(min, max, base::JsonInteger::kIntegralNumber);
}

absl::StatusOr<DeviceSpec> ReadDevice(const JsonField& r) {
  TS_RETURN_IF_ERROR(r.RequireObject({"name", "peak_flops", "memory_bytes", "memory_bandwidth"}));
  DeviceSpec d;
  TS_ASSIGN_OR_RETURN(const JsonField name, r.Member("name"));
  TS_ASSIGN_OR_RETURN(d.name, name.NonEmptyString());
  TS_ASSIGN_OR_RETURN(const JsonField flops, r.Member("peak_flops"));
  TS_RETURN_IF_ERROR(flops.RequireObject({"f32", "f16", "bf16"}));
  TS_ASSIGN_OR_RETURN(d.peak_flops_f32, Number(flops, "f32", 0, true, kMaxFlops));
  // f16 and bf16 may be omitted or 0: unsupported, the f32 figure is used.
  if (flops.Has("f16")) {
    TS_ASSIGN_OR_RETURN(d.peak_flops_f16, Number(flops, "f16", 0, false, kMaxFlops));
  }
  if (flops.Has("bf16")) {
    TS_ASSIGN_OR_RETURN(d.peak_flops_bf16, Number(flops, "bf16", 0, false, kMaxFlops));
  }
  TS_ASSIGN_OR_RETURN(d.memory_bytes,
                      Integer(r, "memory_bytes", 1, static_cast<int64_t>(kMaxBytes)));
  TS_ASSIGN_OR_RETURN(d.memory_bandwidth, Number(r, "memory_bandwidth", 0, true, kMaxBandwidth));
  return d;
}

absl::StatusOr<LinkSpec> ReadLink(const JsonField& parent, absl::string_view key) {
  TS_ASSIGN_OR_RETURN(const JsonField r, parent.Member(key));
  TS_RETURN_IF_ERROR(r.RequireObject({"bandwidth", "latency"}));
  LinkSpec link;
  TS_ASSIGN_OR_RETURN(link.bandwidth, Number(r, "bandwidth", 0, true, kMaxBandwidth));
  TS_ASSIGN_OR_RETURN(link.latency, Number(r, "latency", 0, false, kMaxLatency));
  return link;
}

// One table of fractions keyed by op class name; classes not listed keep their default.
absl::Status ReadFractions(const JsonField& parent, absl::string_view key,
                           std::array<double, kOpClassCount>& fractions) {
  if (!parent.Has(key)) return absl::OkStatus();
  const JsonField r = parent.MemberOrDie(key);
  std::vector<absl::string_view> names;
  for (int i = 0; i < kOpClassCount; ++i) {
    names.push_back(graph::OpClassName(static_cast<graph::OpClass>(i)));
  }
  TS_RETURN_IF_ERROR(r.RequireObject(names));
  for (int i = 0; i < kOpClassCount; ++i) {
    if (!r.Has(names[i])) continue;
    TS_ASSIGN_OR_RETURN(fractions[i], Number(r, names[i], 0, true, 1));
  }
  return absl::OkStatus();
}

// "efficiency": {"flops": {class: fraction}, "bandwidth": {...}, "op_overhead_s": s,
// "overlap_slowdown": f, "winograd_speedup": w}.
absl::StatusOr<Efficiency> ReadEfficiency(const JsonField& r) {
  TS_RETURN_IF_ERROR(r.RequireObject(
      {"flops", "bandwidth", "op_overhead_s", "overlap_slowdown", "winograd_speedup"}));
  Efficiency e;
  TS_RETURN_IF_ERROR(ReadFractions(r, "flops", e.flops));
  TS_RETURN_IF_ERROR(ReadFractions(r, "bandwidth", e.bandwidth));
  if (r.Has("op_overhead_s")) {
    TS_ASSIGN_OR_RETURN(e.op_overhead_s, Number(r, "op_overhead_s", 0, false, kMaxOverhead));
  }
  if (r.Has("overlap_slowdown")) {
    TS_ASSIGN_OR_RETURN(e.overlap_slowdown,
                        Number(r, "overlap_slowdown", 0, false, kMaxOverlapSlowdown));
  }
  // Absent: 1. An efficiency object is a measurement (`tessera calibrate`'s, of kernels
  // without Winograd, including files written before this field existed); a file that
  // measured a GPU library says so.
  e.winograd_speedup = 1;
  if (r.Has("winograd_speedup")) {
    TS_ASSIGN_OR_RETURN(e.winograd_speedup,
                        Number(r, "winograd_speedup", 1, false, kMaxWinogradSpeedup));
  }
  return e;
}

OrderedJson FractionsJson(const std::array<double, kOpClassCount>& fractions) {
  OrderedJson doc = OrderedJson::object();
  for (int i = 0; i < kOpClassCount; ++i) {
    doc[std::string(graph::OpClassName(static_cast<graph::OpClass>(i)))] = fractions[i];
  }
  return doc;
}

absl::Status ReadCounts(const JsonField& r, ClusterSpec& c) {
  TS_ASSIGN_OR_RETURN(const int64_t per_node, Integer(r, "devices_per_node", 1, kMaxDevices));
  TS_ASSIGN_OR_RETURN(const int64_t nodes, Integer(r, "nodes", 1, kMaxDevices));
  if (per_node * nodes > kMaxDevices) {
    return r.MemberOrDie("nodes").Error(absl::StrCat(
        nodes, " nodes of ", per_node, " devices is more than ", kMaxDevices, " devices"));
  }
  c.devices_per_node = static_cast<int>(per_node);
  c.nodes = static_cast<int>(nodes);
  if (!r.Has("devices")) return absl::OkStatus();
  // A partial last node: more than (nodes - 1) full nodes, at most `nodes` full.
  TS_ASSIGN_OR_RETURN(const int64_t devices,
                      Integer(r, "devices", (nodes - 1) * per_node + 1, nodes * per_node));
  c.partial_devices = devices == nodes * per_node ? 0 : static_cast<int>(devices);
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ReadCluster(const JsonField& r) {
  TS_RETURN_IF_ERROR(r.RequireObject({"name", "devices_per_node", "nodes", "devices", "device",
                                      "intra_node", "inter_node", "price_per_device_hour",
                                      "source", "efficiency", "op_times"}));
  ClusterSpec c;
  TS_ASSIGN_OR_RETURN(const JsonField name, r.Member("name"));
  TS_ASSIGN_OR_RETURN(c.name, name.NonEmptyString());
  TS_RETURN_IF_ERROR(ReadCounts(r, c));
  TS_ASSIGN_OR_RETURN(const JsonField device, r.Member("device"));
  TS_ASSIGN_OR_RETURN(c.device, ReadDevice(device));
  TS_ASSIGN_OR_RETURN(c.intra_node, ReadLink(r, "intra_node"));
  TS_ASSIGN_OR_RETURN(c.inter_node, ReadLink(r, "inter_node"));
  TS_ASSIGN_OR_RETURN(c.price_per_device_hour,
                      Number(r, "price_per_device_hour", 0, false, kMaxPrice));
  if (r.Has("source")) {
    TS_ASSIGN_OR_RETURN(c.source, r.MemberOrDie("source").String());
  }
  if (r.Has("efficiency")) {
    TS_ASSIGN_OR_RETURN(c.efficiency, ReadEfficiency(r.MemberOrDie("efficiency")));
  }
  if (r.Has("op_times")) {
    TS_ASSIGN_OR_RETURN(c.op_times, ReadOpTimes(r.MemberOrDie("op_times")));
  }
  return c;
}

OrderedJson LinkJson(const LinkSpec& link) {
  return OrderedJson{{"bandwidth", link.bandwidth}, {"latency", link.latency}};
}

}  // namespace

absl::StatusOr<ClusterSpec> ClusterFromJson(absl::string_view text, absl::string_view source_name) {
  TS_ASSIGN_OR_RETURN(const Json doc, base::ParseJson(text, source_name, kJsonFormat));
  return ReadCluster(JsonField(doc, source_name));
}

std::string ClusterToJson(const ClusterSpec& c) {
  OrderedJson doc;
  doc["name"] = c.name;
  doc["devices_per_node"] = c.devices_per_node;
  doc["nodes"] = c.nodes;
  if (c.partial_devices > 0) doc["devices"] = c.partial_devices;
  doc["device"] = OrderedJson{
      {"name", c.device.name},
      {"peak_flops", OrderedJson{{"f32", c.device.peak_flops_f32},
                                 {"f16", c.device.peak_flops_f16},
                                 {"bf16", c.device.peak_flops_bf16}}},
      {"memory_bytes", c.device.memory_bytes},
      {"memory_bandwidth", c.device.memory_bandwidth}};
  doc["intra_node"] = LinkJson(c.intra_node);
  doc["inter_node"] = LinkJson(c.inter_node);
  doc["price_per_device_hour"] = c.price_per_device_hour;
  doc["source"] = c.source;
  if (c.efficiency.has_value()) {
    doc["efficiency"] = OrderedJson{{"flops", FractionsJson(c.efficiency->flops)},
                                    {"bandwidth", FractionsJson(c.efficiency->bandwidth)},
                                    {"op_overhead_s", c.efficiency->op_overhead_s},
                                    {"overlap_slowdown", c.efficiency->overlap_slowdown},
                                    {"winograd_speedup", c.efficiency->winograd_speedup}};
  }
  if (!c.op_times.empty()) doc["op_times"] = OpTimesJson(c.op_times);
  return doc.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

}  // namespace tessera::costmodel
