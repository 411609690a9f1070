// Progress of a training run, written to a stream: on a terminal one line redrawn with '\r',
// otherwise plain lines every `log_every` steps and at the last step.
//
//   ProgressReporter progress(&std::cerr, {.is_terminal = isatty(fileno(stderr)) != 0,
//                                          .total_steps = 1000, .first_step = 0, .batch = 32});
//   for (int64_t step = 0; step < 1000; ++step) {
//     ... loss = ...
//     progress.Update(step + 1, loss, SecondsSinceStart());   // steps done, not the index
//   }
//   progress.Finish();
//
// Terminal:  [#########...............]  120/1000  loss 1.2345  850 samples/s  left 01:02
// Plain:     step 120/1000  loss 1.2345  850 samples/s  elapsed 00:08  left 01:02
// `loss` is the mean of the last `loss_window` losses; samples/s and the time left count only
// the steps of this run (a resumed run starts its clock at `first_step`).
#pragma once

#include <cstdint>
#include <deque>
#include <ostream>
#include <string>

namespace tessera::exec {

struct ProgressLine {
  int64_t step = 0;          // steps done
  int64_t total = 0;         // steps of the whole run
  double loss = 0;           // running mean
  double samples_per_s = 0;
  double elapsed_s = 0;
  double left_s = -1;        // < 0: unknown (no step timed yet)
};

// "01:02", "1:02:03"; "--:--" for a negative (unknown) time.
std::string ClockText(double seconds);
// The terminal line, without '\r': a bar of `bar_width` cells, step/total, loss, samples/s,
// time left.
std::string FormatProgressBar(const ProgressLine& line, int bar_width = 24);
// The plain line: step/total, loss, samples/s, elapsed, time left.
std::string FormatProgressPlain(const ProgressLine& line);

// The mean of the last `window` values added.
class RunningMean {
 public:
  explicit RunningMean(int64_t window) : window_(window < 1 ? 1 : window) {}
  void Add(double value);
  double Mean() const { return values_.empty() ? 0 : sum_ / static_cast<double>(values_.size()); }
  int64_t count() const { return static_cast<int64_t>(values_.size()); }

 private:
  int64_t window_;
  std::deque<double> values_;
  double sum_ = 0;
  int64_t adds_since_sum_ = 0;
};

struct ProgressOptions {
  bool is_terminal = false;
  int64_t total_steps = 0;
  int64_t first_step = 0;        // steps already done when this run started (resume)
  int64_t batch = 1;             // samples per step
  int64_t log_every = 10;        // plain lines
  int64_t loss_window = 20;
  double redraw_every_s = 0.1;   // terminal: at most this often (and always at the last step)
};

class ProgressReporter {
 public:
  // `out` may be null: nothing is written.
  ProgressReporter(std::ostream* out, const ProgressOptions& options);
  // After `steps_done` steps (counting from 0 of the whole run), the last loss, and the seconds
  // since this run started.
  void Update(int64_t steps_done, double loss, double elapsed_s);
  // A message on its own line (warnings, "resumed from ..."), not overwritten by the bar.
  void Note(const std::string& text);
  // Ends the terminal line.
  void Finish();

  ProgressLine Current(int64_t steps_done, double elapsed_s) const;
  const RunningMean& loss() const { return loss_; }

 private:
  void Draw(const std::string& text);

  std::ostream* out_;
  ProgressOptions options_;
  RunningMean loss_;
  size_t drawn_width_ = 0;   // terminal: width of the line on screen (0: none)
  double last_draw_s_ = -1;
};

}  // namespace tessera::exec
