#include "tessera/exec/progress.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/text_format.h"

namespace tessera::exec {
namespace {

std::string StepText(const ProgressLine& line) {
  const int width = static_cast<int>(absl::StrCat(line.total).size());
  return absl::StrFormat("%*d/%d", width, line.step, line.total);
}

std::string RateText(double samples_per_s) {
  return absl::StrCat(base::HumanCount(samples_per_s), " samples/s");
}

}  // namespace

std::string ClockText(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "--:--";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%02d:%02d", s / 60, s % 60);
}

std::string FormatProgressBar(const ProgressLine& line, int bar_width) {
  const double fraction =
      line.total > 0 ? std::clamp(static_cast<double>(line.step) / line.total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(std::floor(fraction * bar_width));
  std::string bar = absl::StrCat("[", std::string(filled, '#'),
                                 std::string(bar_width - filled, '.'), "]");
  return absl::StrFormat("%s  %s  loss %.4f  %s  left %s", bar, StepText(line), line.loss,
                         RateText(line.samples_per_s), ClockText(line.left_s));
}

std::string FormatProgressPlain(const ProgressLine& line) {
  return absl::StrFormat("step %s  loss %.4f  %s  elapsed %s  left %s", StepText(line), line.loss,
                         RateText(line.samples_per_s), ClockText(line.elapsed_s),
                         ClockText(line.left_s));
}

void RunningMean::Add(double value) {
  values_.push_back(value);
  sum_ += value;
  if (static_cast<int64_t>(values_.size()) > window_) {
    sum_ -= values_.front();
    values_.pop_front();
  }
  // Re-sum now and then so that rounding does not drift over a long run.
  if (values_.size() == static_cast<size_t>(window_) && ++adds_since_sum_ >= 4096) {
    sum_ = 0;
    for (double v : values_) sum_ += v;
    adds_since_sum_ = 0;
  }
}

ProgressReporter::ProgressReporter(std::ostream* out, const ProgressOptions& options)
    : out_(out), options_(options), loss_(options.loss_window) {}

ProgressLine ProgressReporter::Current(int64_t steps_done, double elapsed_s) const {
  ProgressLine line{.step = steps_done, .total = options_.total_steps, .loss = loss_.Mean(),
                    .elapsed_s = elapsed_s};
  const int64_t run = steps_done - options_.first_step;
  if (run > 0 && elapsed_s > 0) {
    line.samples_per_s = static_cast<double>(run * options_.batch) / elapsed_s;
    line.left_s = static_cast<double>(std::max<int64_t>(options_.total_steps - steps_done, 0)) *
                  elapsed_s / static_cast<double>(run);
  }
  return line;
}

void ProgressReporter::Update(int64_t steps_done, double loss, double elapsed_s) {
  loss_.Add(loss);
  if (out_ == nullptr) return;
  const bool last = steps_done >= options_.total_steps;
  if (!options_.is_terminal) {
    const int64_t every = std::max<int64_t>(options_.log_every, 1);
    if (steps_done % every == 0 || last) {
      *out_ << FormatProgressPlain(Current(steps_done, elapsed_s)) << "\n" << std::flush;
    }
    return;
  }
  if (!last && last_draw_s_ >= 0 && elapsed_s - last_draw_s_ < options_.redraw_every_s) return;
  last_draw_s_ = elapsed_s;
  Draw(FormatProgressBar(Current(steps_done, elapsed_s)));
}

void ProgressReporter::Draw(const std::string& text) {
  // '\r' back to the start, the new line, and spaces over what is left of a longer old one.
  *out_ << "\r" << text;
  if (text.size() < drawn_width_) *out_ << std::string(drawn_width_ - text.size(), ' ');
  *out_ << std::flush;
  drawn_width_ = text.size();
}

void ProgressReporter::Note(const std::string& text) {
  if (out_ == nullptr) return;
  if (options_.is_terminal && drawn_width_ > 0) {
    *out_ << "\r" << std::string(drawn_width_, ' ') << "\r";
    drawn_width_ = 0;
    last_draw_s_ = -1;  // redraw the bar at the next update
  }
  *out_ << text << "\n" << std::flush;
}

void ProgressReporter::Finish() {
  if (out_ == nullptr || !options_.is_terminal || drawn_width_ == 0) return;
  *out_ << "\n" << std::flush;
  drawn_width_ = 0;
}

}  // namespace tessera::exec
