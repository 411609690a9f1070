// Reasons per layer: the classification, then what the chosen strategy moves
// against data_parallel.
#include "tessera/partitioner/layer_reasons.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/partitioner/heuristic_planner.h"
#include "tessera/partitioner/objective.h"

namespace tessera::partitioner {
namespace {

std::string Mb(double bytes) { return absl::StrFormat("%.3g MB", bytes / 1e6); }

// Bytes one device sends for layer i on option k (own collectives + input transitions).
double SentBytes(const Problem& problem, int i, int k, const Choice& choice) {
  const Layer& l = problem.layers[i];
  const LayerOption& o = l.options[k];
  double bytes = o.blocking_sent_bytes + o.sync_sent_bytes;
  for (size_t in = 0; in < l.inputs.size(); ++in) {
    const int e = l.inputs[in];
    bytes += EdgeTransition(problem, e, ProducerLayout(problem, e, choice), o.inputs[in],
                            o.partial_dx).sent_bytes;
  }
  return bytes;
}

std::string Classification(const Problem& problem, const Layer& l, double threshold) {
  if (l.kind == LayerKind::kRecurrent) {
    return "LSTM: data_parallel only (a hidden split needs collectives every timestep)";
  }
  const bool heavy = l.flops_per_param_byte >= threshold;
  return absl::StrFormat("%s (%.3g FLOP/param byte %s %.3g)",
                         heavy ? "compute-heavy" : "parameter-heavy", l.flops_per_param_byte,
                         heavy ? ">=" : "<", threshold);
}

std::string ParamlessReason(const LayerOption& o) {
  switch (o.output) {
    case Layout::kBatch: return "no parameters: runs on the batch split";
    case Layout::kFeature:
      return o.detail.empty() ? "no parameters: keeps the feature split of its input"
                              : "no parameters: feature split, " + o.detail;
    case Layout::kReplicated: return "no parameters: computed whole on every device";
  }
  return "";
}

}  // namespace

std::vector<std::string> LayerReasons(const Problem& problem, const Choice& choice,
                                      const ReasonContext& context) {
  const double threshold = ComputeHeavyThreshold(problem);
  std::vector<std::string> reasons(problem.layers.size());
  for (int i = 0; i < static_cast<int>(problem.layers.size()); ++i) {
    const Layer& l = problem.layers[i];
    const LayerOption& o = l.options[choice[i]];
    if (l.kind == LayerKind::kParamless) {
      reasons[i] = ParamlessReason(o);
      continue;
    }
    std::string why = Classification(problem, l, threshold);
    const int dp = FindOption(l, Strategy::kDataParallel);
    const double moved = SentBytes(problem, i, choice[i], choice);
    if (context.planner == "data" || context.planner == "model") {
      why = absl::StrCat("planner '", context.planner, "'; ", why);
    }
    if (o.strategy == Strategy::kDataParallel) {
      why += absl::StrFormat(": data_parallel %s", o.detail.empty() ? "moves no gradients" : o.detail);
    } else if (dp >= 0) {
      why += absl::StrFormat(": %s moves %s vs %s for data_parallel", StrategyName(o.strategy),
                             Mb(moved), Mb(SentBytes(problem, i, dp, choice)));
    }
    for (size_t s = 0; s < context.sharded.size(); ++s) {
      if (context.sharded[s] == i) {
        why += absl::StrFormat("; sharded to fit memory (saves %s per device)",
                               Mb(static_cast<double>(context.saved[s])));
      }
    }
    reasons[i] = why;
  }
  return reasons;
}

}  // namespace tessera::partitioner
