#include "tessera/partitioner/recommend.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/partitioner/plan_output_impl.h"

namespace tessera::partitioner {
namespace {

absl::Status CheckOptions(const std::vector<costmodel::ClusterSpec>& clusters,
                          const RecommendOptions& o) {
  if (o.samples < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("samples must be at least 1 (the training set size), got ", o.samples));
  }
  if (!(o.epochs > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("epochs must be above 0, got ", o.epochs));
  }
  if (o.max_hours < 0 || o.max_cost < 0) {
    return absl::InvalidArgumentError("max hours and max cost must not be negative");
  }
  if (o.batch_per_device < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch per device must be at least 1, got ", o.batch_per_device));
  }
  if (o.max_devices < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max devices must be at least 1, got ", o.max_devices));
  }
  if (clusters.empty()) return absl::InvalidArgumentError("no cluster to recommend from");
  return absl::OkStatus();
}

RecommendOption Evaluate(const costmodel::ClusterSpec& base, int devices,
                         const RecommendOptions& o, const PlanAtFn& plan_at) {
  const costmodel::ClusterSpec cluster = base.WithDevices(devices);
  RecommendOption r;
  r.cluster = base.name;
  r.devices = devices;
  r.nodes = cluster.nodes;
  r.global_batch = o.batch_per_device * devices;
  r.price_per_device_hour = base.price_per_device_hour;
  absl::StatusOr<Plan> plan = plan_at(cluster, devices, r.global_batch);
  if (!plan.ok()) {
    r.note = std::string(plan.status().message());
    return r;
  }
  r.planned = true;
  r.fits = plan->memory.fits;
  if (!r.fits) {
    const std::vector<int64_t>& peaks = plan->memory.peak_bytes;
    const int64_t peak = peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end());
    r.note = absl::StrCat("does not fit: needs ", base::HumanBytes(peak), " per device, has ",
                          base::HumanBytesExact(plan->memory.device_capacity_bytes));
  }
  r.step_time_s = plan->predicted.step_time_s;
  r.samples_per_s = r.step_time_s > 0 ? static_cast<double>(r.global_batch) / r.step_time_s : 0;
  if (r.samples_per_s > 0) {
    r.hours = static_cast<double>(o.samples) * o.epochs / r.samples_per_s / 3600.0;
    r.cost_usd = r.hours * devices * r.price_per_device_hour;
  }
  return r;
}

// True when a is the better pick for the rule (cheapest or fastest first).
bool Better(const RecommendOption& a, const RecommendOption& b, bool fastest_first) {
  if (fastest_first) {
    if (a.hours != b.hours) return a.hours < b.hours;
    return a.cost_usd < b.cost_usd;
  }
  if (a.cost_usd != b.cost_usd) return a.cost_usd < b.cost_usd;
  return a.hours < b.hours;
}

std::string Describe(const RecommendOption& o) {
  return absl::StrCat(o.devices, " x ", o.cluster, ": ", base::HumanSeconds(o.hours * 3600),
                      ", $", absl::StrFormat("%.2f", o.cost_usd));
}

}  // namespace

std::vector<int> RecommendDeviceCounts(int devices_per_node, int max_devices) {
  std::set<int> counts;
  for (int64_t p = 1; p <= max_devices; p *= 2) {
    counts.insert(static_cast<int>(p));
    if (devices_per_node > 1 && p * devices_per_node <= max_devices) {
      counts.insert(static_cast<int>(p * devices_per_node));
    }
  }
  return {counts.begin(), counts.end()};
}

void ChooseOption(Recommendation& r) {
  const RecommendOptions& o = r.options_used;
  const bool deadline = o.max_hours > 0, budget = o.max_cost > 0;
  const bool fastest_first = budget && !deadline;
  r.rule = deadline ? absl::StrCat("cheapest finishing within ", o.max_hours, " h",
                                   budget ? absl::StrCat(" and $", o.max_cost) : "")
           : budget ? absl::StrCat("fastest within $", o.max_cost)
                    : "cheapest (no time or cost limit given)";
  r.choice = -1;
  int closest = -1;  // the fitting option nearest to the limits: fastest or cheapest
  for (int i = 0; i < static_cast<int>(r.options.size()); ++i) {
    const RecommendOption& c = r.options[i];
    if (!c.planned || !c.fits || c.samples_per_s <= 0) continue;
    if (closest < 0 || Better(c, r.options[closest], deadline || fastest_first)) closest = i;
    if (deadline && c.hours > o.max_hours) continue;
    if (budget && c.cost_usd > o.max_cost) continue;
    if (r.choice < 0 || Better(c, r.options[r.choice], fastest_first)) r.choice = i;
  }
  if (r.choice >= 0) {
    r.explanation = absl::StrCat("choice (", r.rule, "): ", Describe(r.options[r.choice]));
  } else if (closest < 0) {
    r.explanation = "no option fits in device memory; try more devices or another cluster";
  } else {
    r.explanation = absl::StrCat("no option meets the limits (", r.rule, "); the ",
                                 deadline || fastest_first ? "fastest" : "cheapest",
                                 " that fits is ", Describe(r.options[closest]));
  }
}

absl::StatusOr<Recommendation> Recommend(const std::vector<costmodel::ClusterSpec>& clusters,
                                         const RecommendOptions& options,
                                         const PlanAtFn& plan_at) {
  if (absl::Status s = CheckOptions(clusters, options); !s.ok()) return s;
  Recommendation r;
  r.options_used = options;
  for (const costmodel::ClusterSpec& cluster : clusters) {
    for (int devices : RecommendDeviceCounts(cluster.devices_per_node, options.max_devices)) {
      r.options.push_back(Evaluate(cluster, devices, options, plan_at));
    }
  }
  ChooseOption(r);
  return r;
}

}  // namespace tessera::partitioner
