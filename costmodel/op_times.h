// A model's op times measured on a device (exec/op_profile.h measures them with the CPU
// kernels on this machine): what costmodel::MeasuredCostModel prices with, and what a cluster
// file stores beside the device it describes (ClusterSpec::op_times), so that a plan made from
// the same file is the same plan (docs/clusters.md, "Measured op times").
//
//   MeasuredOpTimes m{.share = 0.5};                   // measured on a 1/2 batch shard
//   m.ops["conv1"] = {.forward_s = 6.7e-3, .backward_s = 14.1e-3};
//   cluster.op_times[OpTimesKey(graph, 2, 1, OptimizerKind::kAdam, "SkylakeX")] = m;
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/graph/graph.h"

namespace tessera::costmodel {

struct MeasuredOp {
  double forward_s = 0;   // seconds of the forward kernel
  double backward_s = 0;  // seconds of the backward kernel (0: none ran)
  bool operator==(const MeasuredOp&) const = default;
};

struct MeasuredUpdate {
  OptimizerKind optimizer = OptimizerKind::kSgd;  // the update that was timed
  double seconds_per_param_byte = 0;
  bool operator==(const MeasuredUpdate&) const = default;
};

struct MeasuredOpTimes {
  double share = 1;                       // of each op's global work the measurement did
  std::map<std::string, MeasuredOp> ops;  // by node name
  std::optional<MeasuredUpdate> update;   // the optimizer's update (none: the fallback's)
  double bucket_copy_s_per_byte = 0;      // gradients into a fused bucket (0: the fallback's)
  bool operator==(const MeasuredOpTimes&) const = default;
};

// The key measured op times are stored under in a cluster file (ClusterSpec::op_times): the
// model's name and a hash of its ops (kinds, names, input and output shapes and dtypes, at the
// global batch), the devices the batch was split over, the threads per device and the
// optimizer whose update was timed, and the kernels' BLAS core type (what OpenBLAS multiplies
// with: times measured with other kernels do not hold). "nmt/1f2e3d4c5b6a7988/2x1/adam/SkylakeX".
std::string OpTimesKey(const graph::Graph& graph, int devices, int threads,
                       OptimizerKind optimizer, std::string_view blas_kernels);

}  // namespace tessera::costmodel
