// Transition costs between layouts (the table is in docs/partitioner.md).
#include "tessera/partitioner/layout.h"

#include "absl/strings/str_cat.h"

namespace tessera::partitioner {

using costmodel::Collective;

absl::string_view LayoutName(Layout l) {
  switch (l) {
    case Layout::kBatch: return "batch";
    case Layout::kFeature: return "feature";
    case Layout::kReplicated: return "replicated";
  }
  return "unknown";
}

absl::StatusOr<Layout> ParseLayout(absl::string_view name) {
  for (Layout l : {Layout::kBatch, Layout::kFeature, Layout::kReplicated}) {
    if (LayoutName(l) == name) return l;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown layout '", name, "'; expected batch, feature or replicated"));
}

double CommContext::Time(Collective kind, double bytes) const {
  if (cost == nullptr || devices <= 1 || bytes <= 0) return 0;
  return cost->CollectiveTime(kind, bytes, device_ids);
}

double CommContext::SentBytes(Collective kind, double bytes) const {
  if (devices <= 1 || bytes <= 0) return 0;
  const double share = static_cast<double>(devices - 1) / devices;
  switch (kind) {
    case Collective::kAllReduce: return 2 * share * bytes;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return share * bytes;
    case Collective::kBroadcast: return bytes;
  }
  return 0;
}

CommContext MakeCommContext(const costmodel::CostModel* cost, int devices) {
  CommContext ctx{.cost = cost, .devices = devices};
  ctx.device_ids.resize(devices);
  for (int d = 0; d < devices; ++d) ctx.device_ids[d] = d;
  return ctx;
}

EdgeCosts ComputeEdgeCosts(double bytes, bool needs_grad, const CommContext& ctx) {
  EdgeCosts e;
  if (ctx.devices <= 1) return e;
  // The four collectives a transition can need, each priced once.
  const double all_gather = ctx.Time(Collective::kAllGather, bytes);
  const double reduce_scatter = ctx.Time(Collective::kReduceScatter, bytes);
  const double all_reduce = ctx.Time(Collective::kAllReduce, bytes);
  const double per_device = bytes / ctx.devices;
  const double all_to_all = ctx.Time(Collective::kAllToAll, per_device);
  const double ag_bytes = ctx.SentBytes(Collective::kAllGather, bytes);
  const double rs_bytes = ctx.SentBytes(Collective::kReduceScatter, bytes);
  const double ar_bytes = ctx.SentBytes(Collective::kAllReduce, bytes);
  const double a2a_bytes = ctx.SentBytes(Collective::kAllToAll, per_device);
  const Layout layouts[] = {Layout::kBatch, Layout::kFeature, Layout::kReplicated};
  for (Layout from : layouts) {
    for (Layout to : layouts) {
      for (bool partial : {false, true}) {
        TransitionCost& c = e.at(from, to, partial);
        // Forward: move the producer's layout to the consumer's.
        if (from != to && to == Layout::kReplicated) {
          c.forward_s = all_gather;  // batch/feature -> replicated: all-gather
          c.sent_bytes += ag_bytes;
        } else if (from != to && from != Layout::kReplicated) {
          c.forward_s = all_to_all;  // batch <-> feature: all-to-all
          c.sent_bytes += a2a_bytes;
        }  // replicated -> batch/feature: a local slice, free
        if (!needs_grad) continue;
        // Backward: the consumer's dX (layout `to`, maybe partial sums) back to `from`.
        const bool summed_input = partial && to == Layout::kReplicated;
        if (summed_input && from == Layout::kReplicated) {
          c.backward_s = all_reduce;
          c.sent_bytes += ar_bytes;
        } else if (summed_input) {
          c.backward_s = reduce_scatter;  // sum the partials, keep my slice
          c.sent_bytes += rs_bytes;
        } else if (from == to || to == Layout::kReplicated) {
          // same layout, or a full replicated gradient sliced locally: free
        } else if (from == Layout::kReplicated) {
          c.backward_s = all_gather;  // the replicated producer needs the whole dY
          c.sent_bytes += ag_bytes;
        } else {
          c.backward_s = all_to_all;
          c.sent_bytes += a2a_bytes;
        }
      }
    }
  }
  return e;
}

}  // namespace tessera::partitioner
