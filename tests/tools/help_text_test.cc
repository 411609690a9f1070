// Every subcommand's --help: exit 0 on standard output, within 100 columns, each option's default
// stated at most once (the parser's "(default: X)", never also in the option's own text), and
// an exit-code line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tessera/tools/inspect_command.h"
#ifdef TESSERA_HAVE_PLAN_COMMANDS
#include "tessera/tools/plan_command.h"
#include "tessera/tools/recommend_command.h"
#endif
#ifdef TESSERA_HAVE_MEMORY_COMMAND
#include "tessera/tools/memory_command.h"
#endif
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include "tessera/tools/calibrate_command.h"
#include "tessera/tools/train_command.h"
#endif

#include "command_runner.h"

namespace tessera::tools {
namespace {

struct Subcommand {
  std::string name;
  CommandFn run;
};

std::vector<Subcommand> Subcommands() {
  std::vector<Subcommand> all = {{"inspect", RunInspect}};
#ifdef TESSERA_HAVE_PLAN_COMMANDS
  all.push_back({"plan", RunPlan});
  all.push_back({"recommend", RunRecommend});
#endif
#ifdef TESSERA_HAVE_MEMORY_COMMAND
  all.push_back({"memory", RunMemory});
#endif
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
  all.push_back({"calibrate", RunCalibrate});
  all.push_back({"train", RunTrain});
#endif
  return all;
}

// The options' entries: from a line "  -..." to the next line that is not indented past the
// flag column (a wrapped entry continues at column 26).
std::vector<std::string> OptionEntries(const std::string& help) {
  std::vector<std::string> entries;
  bool in_options = false;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    if (line == "options:" || line == "arguments:") {
      in_options = true;
      continue;
    }
    if (!in_options) continue;
    if (absl::StartsWith(line, "  -") || (absl::StartsWith(line, "  ") && line[2] != ' ')) {
      entries.emplace_back(line);
    } else if (absl::StartsWith(line, std::string(26, ' ')) && !entries.empty()) {
      absl::StrAppend(&entries.back(), " ", absl::StripLeadingAsciiWhitespace(line));
    } else {
      in_options = false;
    }
  }
  return entries;
}

TEST(HelpTextTest, EveryDefaultIsStatedOnceAndEveryLineFitsOneHundredColumns) {
  for (const Subcommand& c : Subcommands()) {
    const CommandResult r = RunCommand(c.run, {"--help"});
    EXPECT_EQ(r.code, 0) << c.name;
    EXPECT_TRUE(r.err.empty()) << c.name << ": " << r.err;
    ASSERT_FALSE(r.out.empty()) << c.name;
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
      EXPECT_LE(line.size(), 100u) << c.name << ": " << line;
    }
    const std::vector<std::string> entries = OptionEntries(r.out);
    EXPECT_GE(entries.size(), 3u) << c.name << "\n" << r.out;
    for (const std::string& entry : entries) {
      const std::vector<std::string> parts = absl::StrSplit(entry, "default");
      EXPECT_LE(parts.size(), 2u) << c.name << ": the default is stated twice: " << entry;
      EXPECT_FALSE(absl::StrContains(entry, "(default: -1)")) << c.name << ": " << entry;
      EXPECT_FALSE(absl::StrContains(entry, "(default: )")) << c.name << ": " << entry;
    }
    EXPECT_TRUE(absl::StrContains(r.out, "exit codes: 0 ok")) << c.name << "\n" << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, "2 usage error")) << c.name << "\n" << r.out;
  }
}

TEST(HelpTextTest, UsageLinesNameEachArgumentOnce) {
  for (const Subcommand& c : Subcommands()) {
    const CommandResult r = RunCommand(c.run, {"--help"});
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
      if (!absl::StartsWith(line, "usage: ")) continue;
      EXPECT_FALSE(absl::StrContains(line, "MODEL MODEL")) << c.name << ": " << line;
    }
  }
}

#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
// The defaults `tessera train --help` states are the ones a run gets (tools/train_jobs.h).
TEST(HelpTextTest, TrainStatesItsModelDependentDefaults) {
  CommandResult r = RunCommand(RunTrain, {"--help"});
  r.out = absl::StrJoin(absl::StrSplit(r.out, absl::ByAnyChar(" \n"), absl::SkipEmpty()), " ");
  for (const char* want : {"(default: 2)", "(default: thread)", "(default: auto)",
                           "(default: local)", "(default: nmt 1000, ocr 1500, others 20)",
                           "(default: adam for nmt and ocr, else sgd)",
                           "(default: 16 for nmt and ocr)", "(default: 60)"}) {
    EXPECT_TRUE(absl::StrContains(r.out, want)) << want << "\n" << r.out;
  }
}
#endif

}  // namespace
}  // namespace tessera::tools
