// The HTML report of a training run (training_html.h).
#include "tessera/exec/training_html.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/html.h"
#include "tessera/base/median.h"
#include "tessera/base/svg_chart.h"
#include "tessera/base/text_format.h"
#include "tessera/exec/progress.h"

namespace tessera::exec {
namespace {

using base::HtmlEscape;

// The plan report's palette (partitioner/plan_output_svg.cc).
constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                   "#59a14f", "#edc948", "#b07aa1", "#9c755f"};
constexpr int64_t kLossWindow = 20;  // the smoothed loss: the mean of the last 20 steps

std::string Value(double v) { return absl::StrFormat("%.4g", v); }

// The mean of the last kLossWindow losses at every step (as the progress line shows it).
std::vector<std::pair<double, double>> RunningLoss(const std::vector<StepRecord>& steps) {
  RunningMean mean(kLossWindow);
  std::vector<std::pair<double, double>> out;
  for (const StepRecord& s : steps) {
    mean.Add(s.loss);
    out.emplace_back(static_cast<double>(s.step), mean.Mean());
  }
  return out;
}

std::string Legend(const std::vector<base::ChartSeries>& series) {
  std::string text = "<p class=\"legend\">";
  for (const base::ChartSeries& s : series) {
    absl::StrAppend(&text, "<span><i class=\"sw\" style=\"background:", s.color, "\"></i>",
                    HtmlEscape(s.name), "</span>");
  }
  return text + "</p>\n";
}

// A chart of one value per step, under a heading.
std::string StepChart(absl::string_view title, absl::string_view y_label,
                      std::vector<base::ChartSeries> series) {
  const std::string legend = series.size() > 1 ? Legend(series) : "";
  return absl::StrCat("<h2>", HtmlEscape(title), "</h2>\n", legend,
                      base::LineChartSvg({.label = std::string(title), .x_label = "step",
                                          .y_label = std::string(y_label),
                                          .series = std::move(series), .integer_x = true}));
}

base::ChartSeries PerStep(std::string name, const char* color,
                          const std::vector<StepRecord>& steps,
                          double (*value)(const StepRecord&)) {
  base::ChartSeries s{.name = std::move(name), .color = color};
  for (const StepRecord& r : steps) s.points.emplace_back(static_cast<double>(r.step), value(r));
  return s;
}

// The held-out metrics' names, in the order they first appear.
std::vector<std::string> MetricNames(const std::vector<EvalRecord>& evals) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const EvalRecord& e : evals) {
    for (const auto& [name, value] : e.metrics) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

std::string MetricCharts(const std::vector<EvalRecord>& evals) {
  std::string text;
  const std::vector<std::string> names = MetricNames(evals);
  for (size_t i = 0; i < names.size(); ++i) {
    base::ChartSeries s{.name = names[i], .color = kColors[i % std::size(kColors)],
                        .markers = true};
    for (const EvalRecord& e : evals) {
      for (const auto& [name, value] : e.metrics) {
        if (name == names[i]) s.points.emplace_back(static_cast<double>(e.step), value);
      }
    }
    absl::StrAppend(&text, StepChart(absl::StrCat("Held-out ", names[i]), names[i], {s}));
  }
  return text;
}

std::string EvalTable(const std::vector<EvalRecord>& evals) {
  const std::vector<std::string> names = MetricNames(evals);
  std::string text = "<table class=\"mem\"><tr><th>step</th>";
  for (const std::string& n : names) absl::StrAppend(&text, "<th>", HtmlEscape(n), "</th>");
  absl::StrAppend(&text, "<th>evaluation time</th></tr>\n");
  for (const EvalRecord& e : evals) {
    const std::map<std::string, double> values(e.metrics.begin(), e.metrics.end());
    absl::StrAppend(&text, "<tr><td class=\"n\">", base::WithThousands(e.step), "</td>");
    for (const std::string& n : names) {
      auto it = values.find(n);
      absl::StrAppend(&text, "<td class=\"n\">", it == values.end() ? "-" : Value(it->second),
                      "</td>");
    }
    absl::StrAppend(&text, "<td class=\"n\">", base::HumanSeconds(e.eval_s), "</td></tr>\n");
  }
  return text + "</table>\n";
}

std::string Cards(const TrainingHistory& h) {
  std::string text = "<div class=\"cards\">\n";
  if (!h.steps.empty()) {
    std::vector<double> rates;
    for (const StepRecord& s : h.steps) rates.push_back(s.samples_per_s);
    absl::StrAppend(
        &text, base::HtmlCard(Value(RunningLoss(h.steps).back().second),
                              absl::StrCat("loss (mean of the last ", kLossWindow, " steps)")),
        base::HtmlCard(base::HumanCount(base::Median(rates)), "samples per second (median)"),
        base::HtmlCard(base::HumanSeconds(h.steps.back().time_s),
                       absl::StrCat(base::WithThousands(h.steps.back().step - h.run.first_step),
                                    " steps in")));
  }
  if (!h.evals.empty()) {
    const EvalRecord& last = h.evals.back();
    for (const auto& [name, value] : last.metrics) {
      absl::StrAppend(&text, base::HtmlCard(Value(value), absl::StrCat("held-out ", name,
                                                                        " at step ", last.step)));
    }
  }
  return text + "</div>\n";
}

std::string Subtitle(const RunInfo& r) {
  std::string text = absl::StrCat(r.workers, r.workers == 1 ? " worker" : " workers",
                                  ", global batch ", base::WithThousands(r.global_batch), ", ",
                                  base::WithThousands(r.steps), " steps");
  if (r.first_step > 0) absl::StrAppend(&text, " (resumed after step ", r.first_step, ")");
  if (r.eval_batches > 0) {
    absl::StrAppend(&text, "; evaluated on ", r.eval_batches, " held-out batches ",
                    r.eval_every > 0 ? absl::StrCat("every ", r.eval_every, " steps and ") : "",
                    "at the end");
  }
  return HtmlEscape(text);
}

}  // namespace

std::string TrainingHtml(const TrainingHistory& h) {
  const std::string title = absl::StrCat("Tessera training: ", h.run.model);
  const auto loss = [](const StepRecord& s) { return s.loss; };
  const auto lr = [](const StepRecord& s) { return s.lr; };
  const auto rate = [](const StepRecord& s) { return s.samples_per_s; };
  base::ChartSeries smooth{.name = absl::StrCat("mean of the last ", kLossWindow, " steps"),
                           .color = kColors[0], .points = RunningLoss(h.steps)};
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", base::ReportCss(), "</style></head><body>\n<h1>",
      HtmlEscape(title), "</h1>\n<div class=\"sub\">", Subtitle(h.run), "</div>\n", Cards(h),
      StepChart("Loss", "loss", {PerStep("loss of the step", "#c5d3e2", h.steps, loss), smooth}),
      MetricCharts(h.evals),
      StepChart("Learning rate", "learning rate", {PerStep("lr", kColors[1], h.steps, lr)}),
      StepChart("Throughput", "samples per second",
                {PerStep("samples/s", kColors[4], h.steps, rate)}),
      h.evals.empty() ? "" : absl::StrCat("<h2>Evaluations</h2>\n", EvalTable(h.evals)),
      "<p class=\"sub\">Generated by tessera train. The loss is the global batch's; samples per "
      "second count each step from the end of the one before, evaluations left out.</p>\n"
      "</body></html>\n");
}

}  // namespace tessera::exec
