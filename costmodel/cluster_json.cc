// Cluster JSON files (docs/clusters.md): strict reading with the source and the
// field path in every error, and writing that reads back to the same spec.
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

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
constexpr int kMaxNesting = 16;         // a cluster file nests 3 deep

std::string Describe(const Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return text;
}

// Reads one object of the document; every error is "<source>: <path>: <what>".
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string path, absl::string_view source)
      : object_(object), path_(std::move(path)), source_(source) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    const std::string at = field.empty() ? path_
                           : path_.empty() ? std::string(field)
                                           : absl::StrCat(path_, ".", field);
    if (at.empty()) return absl::InvalidArgumentError(absl::StrCat(source_, ": ", what));
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", at, ": ", what));
  }

  // An object whose members are all in `allowed`.
  absl::Status Check(std::initializer_list<absl::string_view> allowed) const {
    return Check(absl::MakeConstSpan(allowed.begin(), allowed.size()));
  }
  absl::Status Check(absl::Span<const absl::string_view> allowed) const {
    if (!object_.is_object()) return Error("", absl::StrCat("expected an object, got ", Describe(object_)));
    for (const auto& [key, unused] : object_.items()) {
      bool known = false;
      for (absl::string_view a : allowed) known = known || a == key;
      if (!known) {
        return Error(key.size() > 40 ? key.substr(0, 40) + "..." : key,
                     absl::StrCat("unknown field; allowed: ", absl::StrJoin(allowed, ", ")));
      }
    }
    return absl::OkStatus();
  }

  bool Has(absl::string_view key) const { return object_.contains(std::string(key)); }

  absl::StatusOr<const Json*> Member(absl::string_view key) const {
    auto it = object_.find(std::string(key));
    if (it == object_.end()) return Error(key, "missing field");
    return &*it;
  }

  ObjectReader Child(absl::string_view key) const {
    return ObjectReader(object_.at(std::string(key)),
                        path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key), source_);
  }

  absl::StatusOr<std::string> String(absl::string_view key, bool non_empty) const {
    TS_ASSIGN_OR_RETURN(const Json* v, Member(key));
    if (!v->is_string()) return Error(key, absl::StrCat("expected a string, got ", Describe(*v)));
    if (non_empty && v->get_ref<const std::string&>().empty())
      return Error(key, "expected a non-empty string");
    return v->get<std::string>();
  }

  // A number in [min, max] (or (min, max] when `min_exclusive`).
  absl::StatusOr<double> Number(absl::string_view key, double min, bool min_exclusive,
                                double max) const {
    TS_ASSIGN_OR_RETURN(const Json* v, Member(key));
    if (!v->is_number()) return Error(key, absl::StrCat("expected a number, got ", Describe(*v)));
    const double x = v->get<double>();
    const bool low = min_exclusive ? !(x > min) : !(x >= min);
    if (low || !(x <= max) || !std::isfinite(x)) {
      return Error(key, absl::StrCat("got ", Describe(*v), "; allowed: ", min_exclusive ? "> " : ">= ",
                                     min, " and <= ", max));
    }
    return x;
  }

  // An integer in [min, max]; integral floating values (1.6e10) are accepted.
  absl::StatusOr<int64_t> Integer(absl::string_view key, int64_t min, int64_t max) const {
    TS_ASSIGN_OR_RETURN(const Json* v, Member(key));
    if (!v->is_number()) return Error(key, absl::StrCat("expected an integer, got ", Describe(*v)));
    const double x = v->get<double>();
    if (x != std::floor(x)) return Error(key, absl::StrCat("expected an integer, got ", Describe(*v)));
    if (x < static_cast<double>(min) || x > static_cast<double>(max)) {
      return Error(key, absl::StrCat("got ", Describe(*v), "; allowed: ", min, " to ", max));
    }
    return v->is_number_integer() ? v->get<int64_t>() : static_cast<int64_t>(x);
  }

 private:
  const Json& object_;
  std::string path_;
  absl::string_view source_;
};

absl::StatusOr<DeviceSpec> ReadDevice(const ObjectReader& r) {
  TS_RETURN_IF_ERROR(r.Check({"name", "peak_flops", "memory_bytes", "memory_bandwidth"}));
  DeviceSpec d;
  TS_ASSIGN_OR_RETURN(d.name, r.String("name", true));
  TS_RETURN_IF_ERROR(r.Member("peak_flops").status());
  const ObjectReader flops = r.Child("peak_flops");
  TS_RETURN_IF_ERROR(flops.Check({"f32", "f16", "bf16"}));
  TS_ASSIGN_OR_RETURN(d.peak_flops_f32, flops.Number("f32", 0, true, kMaxFlops));
  // f16 and bf16 may be omitted or 0: unsupported, the f32 figure is used.
  if (flops.Has("f16")) {
    TS_ASSIGN_OR_RETURN(d.peak_flops_f16, flops.Number("f16", 0, false, kMaxFlops));
  }
  if (flops.Has("bf16")) {
    TS_ASSIGN_OR_RETURN(d.peak_flops_bf16, flops.Number("bf16", 0, false, kMaxFlops));
  }
  TS_ASSIGN_OR_RETURN(d.memory_bytes, r.Integer("memory_bytes", 1, static_cast<int64_t>(kMaxBytes)));
  TS_ASSIGN_OR_RETURN(d.memory_bandwidth, r.Number("memory_bandwidth", 0, true, kMaxBandwidth));
  return d;
}

absl::StatusOr<LinkSpec> ReadLink(const ObjectReader& parent, absl::string_view key) {
  TS_RETURN_IF_ERROR(parent.Member(key).status());
  const ObjectReader r = parent.Child(key);
  TS_RETURN_IF_ERROR(r.Check({"bandwidth", "latency"}));
  LinkSpec link;
  TS_ASSIGN_OR_RETURN(link.bandwidth, r.Number("bandwidth", 0, true, kMaxBandwidth));
  TS_ASSIGN_OR_RETURN(link.latency, r.Number("latency", 0, false, kMaxLatency));
  return link;
}

// One table of fractions keyed by op class name; classes not listed keep their default.
absl::Status ReadFractions(const ObjectReader& parent, absl::string_view key,
                           std::array<double, kOpClassCount>& fractions) {
  if (!parent.Has(key)) return absl::OkStatus();
  const ObjectReader r = parent.Child(key);
  std::vector<absl::string_view> names;
  for (int i = 0; i < kOpClassCount; ++i) {
    names.push_back(graph::OpClassName(static_cast<graph::OpClass>(i)));
  }
  TS_RETURN_IF_ERROR(r.Check(names));
  for (int i = 0; i < kOpClassCount; ++i) {
    if (!r.Has(names[i])) continue;
    TS_ASSIGN_OR_RETURN(fractions[i], r.Number(names[i], 0, true, 1));
  }
  return absl::OkStatus();
}

// "efficiency": {"flops": {class: fraction}, "bandwidth": {...}, "op_overhead_s": s,
// "overlap_slowdown": f, "winograd_speedup": w}.
absl::StatusOr<Efficiency> ReadEfficiency(const ObjectReader& r) {
  TS_RETURN_IF_ERROR(r.Check(
      {"flops", "bandwidth", "op_overhead_s", "overlap_slowdown", "winograd_speedup"}));
  Efficiency e;
  TS_RETURN_IF_ERROR(ReadFractions(r, "flops", e.flops));
  TS_RETURN_IF_ERROR(ReadFractions(r, "bandwidth", e.bandwidth));
  if (r.Has("op_overhead_s")) {
    TS_ASSIGN_OR_RETURN(e.op_overhead_s, r.Number("op_overhead_s", 0, false, kMaxOverhead));
  }
  if (r.Has("overlap_slowdown")) {
    TS_ASSIGN_OR_RETURN(e.overlap_slowdown,
                        r.Number("overlap_slowdown", 0, false, kMaxOverlapSlowdown));
  }
  // Absent: 1. An efficiency object is a measurement (`tessera calibrate`'s, of kernels
  // without Winograd, including files written before this field existed); a file that
  // measured a GPU library says so.
  e.winograd_speedup = 1;
  if (r.Has("winograd_speedup")) {
    TS_ASSIGN_OR_RETURN(e.winograd_speedup,
                        r.Number("winograd_speedup", 1, false, kMaxWinogradSpeedup));
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

absl::Status ReadCounts(const ObjectReader& r, ClusterSpec& c) {
  TS_ASSIGN_OR_RETURN(const int64_t per_node, r.Integer("devices_per_node", 1, kMaxDevices));
  TS_ASSIGN_OR_RETURN(const int64_t nodes, r.Integer("nodes", 1, kMaxDevices));
  if (per_node * nodes > kMaxDevices) {
    return r.Error("nodes", absl::StrCat(nodes, " nodes of ", per_node, " devices is more than ",
                                         kMaxDevices, " devices"));
  }
  c.devices_per_node = static_cast<int>(per_node);
  c.nodes = static_cast<int>(nodes);
  if (!r.Has("devices")) return absl::OkStatus();
  // A partial last node: more than (nodes - 1) full nodes, at most `nodes` full.
  TS_ASSIGN_OR_RETURN(const int64_t devices,
                      r.Integer("devices", (nodes - 1) * per_node + 1, nodes * per_node));
  c.partial_devices = devices == nodes * per_node ? 0 : static_cast<int>(devices);
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ReadCluster(const ObjectReader& r) {
  TS_RETURN_IF_ERROR(r.Check({"name", "devices_per_node", "nodes", "devices", "device",
                              "intra_node", "inter_node", "price_per_device_hour", "source",
                              "efficiency"}));
  ClusterSpec c;
  TS_ASSIGN_OR_RETURN(c.name, r.String("name", true));
  TS_RETURN_IF_ERROR(ReadCounts(r, c));
  TS_RETURN_IF_ERROR(r.Member("device").status());
  TS_ASSIGN_OR_RETURN(c.device, ReadDevice(r.Child("device")));
  TS_ASSIGN_OR_RETURN(c.intra_node, ReadLink(r, "intra_node"));
  TS_ASSIGN_OR_RETURN(c.inter_node, ReadLink(r, "inter_node"));
  TS_ASSIGN_OR_RETURN(c.price_per_device_hour, r.Number("price_per_device_hour", 0, false, kMaxPrice));
  if (r.Has("source")) {
    TS_ASSIGN_OR_RETURN(c.source, r.String("source", false));
  }
  if (r.Has("efficiency")) {
    TS_ASSIGN_OR_RETURN(c.efficiency, ReadEfficiency(r.Child("efficiency")));
  }
  return c;
}

// Deepest bracket nesting outside strings (parsing garbage nested a million deep
// would exhaust the stack).
int Nesting(absl::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (ch == '}' || ch == ']') {
      --depth;
    }
  }
  return deepest;
}

OrderedJson LinkJson(const LinkSpec& link) {
  return OrderedJson{{"bandwidth", link.bandwidth}, {"latency", link.latency}};
}

}  // namespace

absl::StatusOr<ClusterSpec> ClusterFromJson(absl::string_view text, absl::string_view source_name) {
  if (Nesting(text) > kMaxNesting) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": nested more than ", kMaxNesting, " deep; not a cluster file"));
  }
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": not valid JSON: ", e.what()));
  }
  return ReadCluster(ObjectReader(doc, "", source_name));
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
  return doc.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

}  // namespace tessera::costmodel
