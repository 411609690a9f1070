// The table and JSON of `tessera recommend`.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/partitioner/plan_output_impl.h"
#include "tessera/partitioner/recommend.h"

namespace tessera::partitioner {
namespace {

using nlohmann::json;

json OptionJson(const RecommendOption& o) {
  return {{"cluster", o.cluster},
          {"devices", o.devices},
          {"nodes", o.nodes},
          {"global_batch", o.global_batch},
          {"price_per_device_hour", o.price_per_device_hour},
          {"planned", o.planned},
          {"fits", o.fits},
          {"step_time_s", o.step_time_s},
          {"samples_per_s", o.samples_per_s},
          {"hours", o.hours},
          {"cost_usd", o.cost_usd},
          {"note", o.note}};
}

}  // namespace

std::string RecommendTable(const Recommendation& r) {
  std::vector<std::vector<std::string>> rows;
  std::string last_cluster;
  for (size_t i = 0; i < r.options.size(); ++i) {
    const RecommendOption& o = r.options[i];
    if (!last_cluster.empty() && o.cluster != last_cluster) rows.emplace_back();
    last_cluster = o.cluster;
    const bool chosen = static_cast<int>(i) == r.choice;
    if (!o.planned) {
      rows.push_back({chosen ? "*" : "", o.cluster, absl::StrCat(o.devices), absl::StrCat(o.nodes),
                      absl::StrCat(o.global_batch), "-", "-", "-", "-", "no", o.note});
      continue;
    }
    rows.push_back({chosen ? "*" : "", o.cluster, absl::StrCat(o.devices), absl::StrCat(o.nodes),
                    absl::StrCat(o.global_batch), base::HumanSeconds(o.step_time_s),
                    absl::StrFormat("%.0f", o.samples_per_s),
                    base::HumanSeconds(o.hours * 3600), absl::StrFormat("$%.2f", o.cost_usd),
                    o.fits ? "yes" : "no", o.note});
  }
  const RecommendOptions& u = r.options_used;
  return absl::StrCat(
      "training ", u.samples, " samples x ", u.epochs, " epochs, ", u.batch_per_device,
      " samples per device\n\n",
      base::RenderTable({"", "cluster", "devices", "nodes", "batch", "step time", "samples/s",
                             "time to train", "cost", "fits", "note"},
                            {false, false, true, true, true, true, true, true, true, false, false},
                            rows),
      "\n", r.explanation, "\n");
}

json RecommendJson(const Recommendation& r) {
  json options = json::array();
  for (const RecommendOption& o : r.options) options.push_back(OptionJson(o));
  const RecommendOptions& u = r.options_used;
  return {{"samples", u.samples},
          {"epochs", u.epochs},
          {"batch_per_device", u.batch_per_device},
          {"max_hours", u.max_hours > 0 ? json(u.max_hours) : json(nullptr)},
          {"max_cost", u.max_cost > 0 ? json(u.max_cost) : json(nullptr)},
          {"options", std::move(options)},
          {"choice", r.choice >= 0 ? OptionJson(r.options[r.choice]) : json(nullptr)},
          {"rule", r.rule},
          {"explanation", r.explanation}};
}

}  // namespace tessera::partitioner
