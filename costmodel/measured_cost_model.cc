// MeasuredCostModel and the op-times key (measured_cost_model.h).
#include "tessera/costmodel/measured_cost_model.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/hash.h"
#include "tessera/graph/dtype.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

MeasuredCostModel::MeasuredCostModel(const CostModel& fallback, MeasuredOpTimes times)
    : fallback_(fallback), times_(std::move(times)) {}

bool MeasuredCostModel::Measured(std::string_view name) const {
  return times_.ops.find(std::string(name)) != times_.ops.end();
}

double MeasuredCostModel::OpTime(const OpWork& work) const {
  const bool pass = work.kind == WorkKind::kForward || work.kind == WorkKind::kBackward;
  if (pass && times_.share > 0) {
    const auto it = times_.ops.find(std::string(work.node));
    if (it != times_.ops.end()) {
      const double scale = work.share / times_.share;
      if (work.kind == WorkKind::kForward) return it->second.forward_s * scale;
      double extra = 0;
      if (work.extra_flops > 0) {
        extra = fallback_.OpTime(
            {.flops = work.extra_flops, .op_class = work.op_class, .dtype = work.dtype});
      }
      return it->second.backward_s * scale + extra;
    }
  }
  if (work.kind == WorkKind::kUpdate && times_.update.has_value() &&
      times_.update->optimizer == work.optimizer) {
    return times_.update->seconds_per_param_byte * work.param_bytes;
  }
  if (work.kind == WorkKind::kBucketCopy && times_.bucket_copy_s_per_byte > 0) {
    return times_.bucket_copy_s_per_byte * work.param_bytes;
  }
  return fallback_.OpTime(work);
}

double MeasuredCostModel::CollectiveTime(Collective kind, double bytes,
                                         const std::vector<int>& devices) const {
  return fallback_.CollectiveTime(kind, bytes, devices);
}

std::string OpTimesKey(const graph::Graph& graph, int devices, int threads,
                       OptimizerKind optimizer) {
  // Each node's kind, name, and its tensors' shapes and dtypes, in the graph's order.
  std::string text;
  const auto add_tensor = [&](graph::TensorId t) {
    if (t == graph::kNoTensor) {
      text += "-;";
      return;
    }
    const graph::Tensor& tensor = graph.tensor(t);
    absl::StrAppend(&text, graph::DTypeName(tensor.dtype), "[");
    for (int64_t d : tensor.shape) absl::StrAppend(&text, d, ",");
    text += "];";
  };
  for (const graph::Node& n : graph.nodes()) {
    absl::StrAppend(&text, graph::OpName(n.kind), " ", n.name, "(");
    for (graph::TensorId t : n.inputs) add_tensor(t);
    text += ")->(";
    for (graph::TensorId t : n.outputs) add_tensor(t);
    text += ")\n";
  }
  return absl::StrFormat("%s/%016x/%dx%d/%s", graph.name(), base::Fnv1a64(text), devices, threads,
                         OptimizerName(optimizer));
}

}  // namespace tessera::costmodel
