// Progress output on fixed numbers: the terminal bar, the plain lines, when each is written.
#include "tessera/exec/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "absl/strings/str_split.h"

namespace tessera::exec {
namespace {

TEST(ProgressFormatTest, ClockText) {
  EXPECT_EQ(ClockText(0), "00:00");
  EXPECT_EQ(ClockText(65.4), "01:05");
  EXPECT_EQ(ClockText(3599.4), "59:59");
  EXPECT_EQ(ClockText(3723), "1:02:03");
  EXPECT_EQ(ClockText(-1), "--:--");
}

TEST(ProgressFormatTest, BarLine) {
  const ProgressLine line{.step = 120, .total = 1000, .loss = 1.23456, .samples_per_s = 850,
                          .elapsed_s = 8, .left_s = 62};
  // 120/1000 of 24 cells is 2.88: two full cells.
  EXPECT_EQ(FormatProgressBar(line),
            "[##......................]   120/1000  loss 1.2346  850 samples/s  left 01:02");
  EXPECT_EQ(FormatProgressBar({.step = 10, .total = 10, .loss = 0.5, .samples_per_s = 12345,
                               .left_s = 0}, 4),
            "[####]  10/10  loss 0.5000  12.3K samples/s  left 00:00");
  EXPECT_EQ(FormatProgressBar({.step = 0, .total = 10}, 4),
            "[....]   0/10  loss 0.0000  0 samples/s  left --:--");
}

TEST(ProgressFormatTest, PlainLine) {
  const ProgressLine line{.step = 120, .total = 1000, .loss = 1.23456, .samples_per_s = 850,
                          .elapsed_s = 8, .left_s = 62};
  EXPECT_EQ(FormatProgressPlain(line),
            "step  120/1000  loss 1.2346  850 samples/s  elapsed 00:08  left 01:02");
}

TEST(RunningMeanTest, MeanOfTheLastWindow) {
  RunningMean m(3);
  EXPECT_EQ(m.Mean(), 0);
  m.Add(1);
  EXPECT_EQ(m.Mean(), 1);
  m.Add(2);
  m.Add(3);
  EXPECT_EQ(m.Mean(), 2);
  m.Add(10);  // 2, 3, 10
  EXPECT_EQ(m.Mean(), 5);
  EXPECT_EQ(m.count(), 3);
}

TEST(ProgressReporterTest, PlainLinesEveryNStepsAndTheLast) {
  std::ostringstream out;
  ProgressReporter p(&out, {.total_steps = 12, .batch = 4, .log_every = 5, .loss_window = 2});
  for (int64_t s = 1; s <= 12; ++s) p.Update(s, /*loss=*/s, /*elapsed_s=*/0.5 * s);
  p.Finish();
  const std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  // Step 5: loss mean of 4 and 5; 5 steps x 4 samples in 2.5 s; 7 steps left at 0.5 s each.
  EXPECT_EQ(lines[0], "step  5/12  loss 4.5000  8 samples/s  elapsed 00:03  left 00:04");
  EXPECT_EQ(lines[1], "step 10/12  loss 9.5000  8 samples/s  elapsed 00:05  left 00:01");
  EXPECT_EQ(lines[2], "step 12/12  loss 11.5000  8 samples/s  elapsed 00:06  left 00:00");
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
}

TEST(ProgressReporterTest, AResumedRunCountsOnlyItsOwnSteps) {
  ProgressReporter p(nullptr, {.total_steps = 100, .first_step = 40, .batch = 2});
  for (int64_t s = 41; s <= 50; ++s) p.Update(s, 1.0, (s - 40) * 0.1);
  const ProgressLine line = p.Current(50, 1.0);
  EXPECT_DOUBLE_EQ(line.samples_per_s, 20.0);  // 10 steps x 2 samples in 1 s
  EXPECT_DOUBLE_EQ(line.left_s, 5.0);          // 50 steps at 0.1 s
}

TEST(ProgressReporterTest, TerminalRedrawsOneLineAndThrottles) {
  std::ostringstream out;
  ProgressReporter p(&out, {.is_terminal = true, .total_steps = 4, .batch = 1,
                            .redraw_every_s = 0.1});
  p.Update(1, 8.0, 0.5);    // drawn
  p.Update(2, 8.0, 0.55);   // too soon: skipped
  p.Note("warning: something");
  p.Update(3, 8.0, 0.56);   // after a note the bar is drawn again at once
  p.Update(4, 8.0, 0.57);   // the last step is always drawn
  const std::string before_finish = out.str();
  p.Finish();
  const std::string s = out.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\r'), 3 + 2);  // three bars, a note clears the line
  EXPECT_EQ(std::count(before_finish.begin(), before_finish.end(), '\n'), 1);  // the note's
  EXPECT_EQ(s.back(), '\n');
  EXPECT_NE(s.find("1/4  loss 8.0000"), std::string::npos) << s;
  EXPECT_EQ(s.find("2/4"), std::string::npos) << s;
  EXPECT_NE(s.find("warning: something\n"), std::string::npos) << s;
  EXPECT_NE(s.find("[########################]  4/4"), std::string::npos) << s;
}

TEST(ProgressReporterTest, AShorterLineCoversTheLongerOne) {
  std::ostringstream out;
  ProgressReporter p(&out, {.is_terminal = true, .total_steps = 2, .batch = 1,
                            .loss_window = 1, .redraw_every_s = 0});
  p.Update(1, 123456.0, 1);  // "loss 123456.0000"
  p.Update(2, 0.0, 2);       // 6 characters shorter, and samples/s "1" is as long as "1"
  const std::vector<std::string> draws = absl::StrSplit(out.str(), '\r', absl::SkipEmpty());
  ASSERT_EQ(draws.size(), 2u);
  EXPECT_EQ(draws[0].size(), draws[1].size());
  EXPECT_EQ(draws[1].substr(draws[1].size() - 5), "     ");
}

}  // namespace
}  // namespace tessera::exec
