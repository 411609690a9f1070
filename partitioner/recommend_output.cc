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

constexpr size_t kTableWidth = 100;

// Rows of one cluster in a row with the same note share one footnote.
struct Footnote {
  std::string cluster, note;
  int first_devices = 0, last_devices = 0;
  size_t last_option = 0;
};

// "[k]", the footnote of option `i`: the last one when option i - 1 had it, else a new one.
std::string NoteMark(std::vector<Footnote>& notes, const RecommendOption& o, size_t i) {
  if (notes.empty() || notes.back().last_option + 1 != i || notes.back().cluster != o.cluster ||
      notes.back().note != o.note) {
    notes.push_back({.cluster = o.cluster, .note = o.note, .first_devices = o.devices});
  }
  notes.back().last_devices = o.devices;
  notes.back().last_option = i;
  return absl::StrCat("[", notes.size(), "]");
}

}  // namespace

std::string RecommendTable(const Recommendation& r) {
  std::vector<std::vector<std::string>> rows;
  std::vector<Footnote> notes;
  std::string last_cluster;
  for (size_t i = 0; i < r.options.size(); ++i) {
    const RecommendOption& o = r.options[i];
    if (!last_cluster.empty() && o.cluster != last_cluster) rows.emplace_back();
    last_cluster = o.cluster;
    std::vector<std::string> row = {static_cast<int>(i) == r.choice ? "*" : "", o.cluster,
                                    absl::StrCat(o.devices), absl::StrCat(o.nodes),
                                    absl::StrCat(o.global_batch)};
    if (o.planned && o.fits) {
      row.insert(row.end(), {base::HumanSeconds(o.step_time_s),
                             absl::StrFormat("%.0f", o.samples_per_s),
                             base::HumanSeconds(o.hours * 3600),
                             absl::StrFormat("$%.2f", o.cost_usd), "yes", ""});
    } else {
      row.insert(row.end(), {"-", "-", "-", "-", o.planned ? "no" : "-",
                             o.note.empty() ? "" : NoteMark(notes, o, i)});
    }
    rows.push_back(std::move(row));
  }
  const RecommendOptions& u = r.options_used;
  std::string text = absl::StrCat(
      "training ", u.samples, " samples x ", u.epochs, " epochs, ", u.batch_per_device,
      " samples per device\n\n",
      base::RenderTable({"", "cluster", "devices", "nodes", "batch", "step time", "samples/s",
                         "time to train", "cost", "fits", "note"},
                        {false, false, true, true, true, true, true, true, true, false, false},
                        rows));
  if (!notes.empty()) absl::StrAppend(&text, "\nnotes:\n");
  for (size_t n = 0; n < notes.size(); ++n) {
    const Footnote& f = notes[n];
    const std::string mark = absl::StrCat("  [", n + 1, "] ");
    const std::string devices = f.first_devices == f.last_devices
        ? absl::StrCat(f.first_devices, f.first_devices == 1 ? " device" : " devices")
        : absl::StrCat(f.first_devices, " to ", f.last_devices, " devices");
    absl::StrAppend(&text, mark,
                    base::WrapText(absl::StrCat(f.cluster, ", ", devices, ": ", f.note),
                                   kTableWidth, mark.size()),
                    "\n");
  }
  absl::StrAppend(&text, "\n", base::WrapText(r.explanation, kTableWidth, 0), "\n");
  return text;
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
