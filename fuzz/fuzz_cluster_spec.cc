// libFuzzer target: the cluster file reader (costmodel/cluster.h ClusterFromJson) on
// arbitrary text. An accepted cluster must write back to JSON that reads back equal, and
// the roofline cost model must answer for it (ops and collectives, at several device
// counts) with times that are >= 0 (never NaN).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "tessera/base/check.h"
#include "tessera/fuzz/verbose.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"

namespace {

using tessera::costmodel::ClusterSpec;
using tessera::costmodel::Collective;

void CheckCostModel(const ClusterSpec& cluster) {
  for (int devices : {1, 2, cluster.devices_per_node + 1, cluster.devices()}) {
    const ClusterSpec sized = cluster.WithDevices(devices);
    TS_CHECK(sized.devices() == devices) << "WithDevices(" << devices << ") has "
                                         << sized.devices();
    const tessera::costmodel::RooflineCostModel model(sized);
    for (int c = 0; c < tessera::costmodel::kOpClassCount; ++c) {
      const double t = model.OpTime({.flops = 1e9, .bytes = 1e6,
                                     .op_class = static_cast<tessera::graph::OpClass>(c)});
      TS_CHECK(t >= 0) << "OpTime " << t << " for op class " << c;
    }
    std::vector<int> all;
    for (int d = 0; d < std::min(devices, 64); ++d) all.push_back(d);
    for (Collective kind : {Collective::kAllReduce, Collective::kAllGather,
                            Collective::kReduceScatter, Collective::kBroadcast,
                            Collective::kAllToAll}) {
      const double t = model.CollectiveTime(kind, 1 << 20, all);
      TS_CHECK(t >= 0) << "CollectiveTime " << t << " for collective "
                       << static_cast<int>(kind) << " on " << all.size() << " devices";
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ClusterSpec> cluster = tessera::costmodel::ClusterFromJson(text, "fuzz.json");
  tessera::fuzz::Verbose(cluster.status());
  if (!cluster.ok()) {
    TS_CHECK(absl::StartsWith(cluster.status().message(), "fuzz.json: "))
        << "error does not name the file: " << cluster.status();
    return 0;
  }
  const std::string written = tessera::costmodel::ClusterToJson(*cluster);
  absl::StatusOr<ClusterSpec> again = tessera::costmodel::ClusterFromJson(written, "again.json");
  TS_CHECK(again.ok()) << "a cluster does not read back from its own JSON: " << again.status();
  TS_CHECK(*again == *cluster) << "the cluster JSON round trip changed the cluster:\n" << written;
  CheckCostModel(*cluster);
  return 0;
}
