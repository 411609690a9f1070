#include "tessera/tools/cli/arg_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tessera::tools {
namespace {

struct Parsed {
  std::string model;
  std::string format = "table";
  int64_t batch = 0;
  bool verbose = false;
  std::vector<std::string> inputs;
};

ArgParser MakeParser(Parsed& p) {
  ArgParser parser("tessera test", "A test command.");
  parser.AddPositional("MODEL", "the model", &p.model);
  parser.AddInt("--batch", "B", "batch", &p.batch, 1);
  parser.AddChoice("--format", {"table", "json"}, "format", &p.format);
  parser.AddFlag("--verbose", "more output", &p.verbose);
  parser.AddStringList("--inputs", "NAMES", "inputs", &p.inputs);
  return parser;
}

TEST(ArgParserTest, ParsesPositionalsOptionsAndEqualsForm) {
  Parsed p;
  ArgParser parser = MakeParser(p);
  ASSERT_TRUE(parser.Parse({"m.onnx", "--batch", "16", "--format=json", "--verbose",
                            "--inputs", "a,b", "--inputs=c"})
                  .ok());
  EXPECT_EQ(p.model, "m.onnx");
  EXPECT_EQ(p.batch, 16);
  EXPECT_EQ(p.format, "json");
  EXPECT_TRUE(p.verbose);
  EXPECT_EQ(p.inputs, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ArgParserTest, ErrorsNameTheArgumentAndPointAtHelp) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"m", "--bogus"}, "unknown option '--bogus'"},
      {{"m", "--batch"}, "--batch needs a value"},
      {{"m", "--batch", "x7"}, "--batch takes a whole number, got 'x7'"},
      {{"m", "--batch", "0"}, "--batch must be at least 1, got 0"},
      {{"m", "--format", "xml"}, "--format must be one of table, json; got 'xml'"},
      {{"m", "--verbose=yes"}, "--verbose takes no value"},
      {{}, "missing MODEL"},
      {{"m", "extra"}, "unexpected argument 'extra'"},
      // A close name is suggested (did_you_mean.h).
      {{"m", "--batc", "8"}, "unknown option '--batc'; did you mean '--batch'?"},
      {{"m", "--verbsoe"}, "unknown option '--verbsoe'; did you mean '--verbose'?"},
      {{"m", "--hlep"}, "unknown option '--hlep'; did you mean '--help'?"},
      {{"m", "--format", "jsno"},
       "--format must be one of table, json; got 'jsno'; did you mean 'json'?"},
  };
  for (const Case& c : cases) {
    Parsed p;
    ArgParser parser = MakeParser(p);
    absl::Status s = parser.Parse(c.args);
    ASSERT_FALSE(s.ok()) << c.expected;
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("tessera test --help"), std::string::npos) << s.message();
  }
}

TEST(ArgParserTest, HelpStopsParsingAndListsEveryOption) {
  Parsed p;
  ArgParser parser = MakeParser(p);
  ASSERT_TRUE(parser.Parse({"--help", "--bogus"}).ok());
  EXPECT_TRUE(parser.help_requested());
  const std::string help = parser.Help();
  for (const char* s : {"usage: tessera test MODEL [options]", "--batch B", "--format table|json",
                        "(default: table)", "--verbose", "--inputs NAMES", "-h, --help"}) {
    EXPECT_NE(help.find(s), std::string::npos) << s << "\n" << help;
  }
}

TEST(ArgParserTest, NegativeNumberIsAValueNotAnOption) {
  Parsed p;
  ArgParser parser = MakeParser(p);
  absl::Status s = parser.Parse({"m", "--batch", "-3"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at least 1, got -3"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::tools

namespace tessera::tools {
namespace {

TEST(ArgParserTest, PositiveNumberAcceptsDecimalsAndRejectsTheRest) {
  for (const char* bad : {"0", "-1", "abc", "nan", "inf", "1e19"}) {
    double value = 1;
    ArgParser parser("tessera test", "A test command.");
    parser.AddPositiveNumber("--hours", "H", "hours", &value);
    absl::Status s = parser.Parse({"--hours", bad});
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(std::string("--hours takes a number above 0, got '") + bad + "'"),
              std::string::npos)
        << s.message();
    EXPECT_EQ(value, 1) << bad;  // left unchanged
  }
  double value = 0;
  ArgParser parser("tessera test", "A test command.");
  parser.AddPositiveNumber("--hours", "H", "hours", &value);
  ASSERT_TRUE(parser.Parse({"--hours=0.25"}).ok());
  EXPECT_EQ(value, 0.25);
}

// AddNumber: a closed range, both ends included; anything else names the range.
TEST(ArgParserTest, NumberTakesItsRangeWithBothEnds) {
  for (const char* good : {"0", "10", "0.6"}) {
    double value = -5;
    ArgParser parser("tessera test", "A test command.");
    parser.AddNumber("--alpha", "A", "a weight", &value, 0, 10);
    ASSERT_TRUE(parser.Parse({"--alpha", good}).ok()) << good;
    EXPECT_EQ(value, std::stod(good));
  }
  for (const char* bad : {"-0.1", "10.5", "nan", "inf", "x"}) {
    double value = 0.6;
    ArgParser parser("tessera test", "A test command.");
    parser.AddNumber("--alpha", "A", "a weight", &value, 0, 10);
    absl::Status s = parser.Parse({"--alpha", bad});
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(std::string("--alpha takes a number from 0 to 10, got '") + bad),
              std::string::npos)
        << s.message();
    EXPECT_EQ(value, 0.6) << bad;
    EXPECT_NE(parser.Help().find("(default: 0.6)"), std::string::npos) << parser.Help();
  }
}

// The default --help states is the one the option gets: the variable's initial value when the
// option accepts it, what .Default() says for a placeholder, and nothing else.
TEST(ArgParserTest, HelpStatesEachDefaultOnceAndNeverAPlaceholder) {
  std::string name = "alice", empty;
  int64_t count = 5, unset = 0, sentinel = -1, zero_ok = 0;
  double hours = 1.5, no_limit = 0;
  bool flag = false;
  std::vector<std::string> list;
  ArgParser parser("tessera test", "A test command.");
  parser.AddString("--name", "S", "a name", &name);
  parser.AddString("--file", "F", "a file", &empty);
  parser.AddInt("--count", "N", "a count", &count, 1);
  parser.AddInt("--batch", "B", "a batch", &unset, 1).Default("the model's");
  parser.AddInt("--eval", "N", "held-out batches", &sentinel, 0).Default("16 for nmt");
  parser.AddInt("--top", "K", "rows", &zero_ok, 0);
  parser.AddPositiveNumber("--hours", "H", "hours", &hours);
  parser.AddPositiveNumber("--max-cost", "C", "budget", &no_limit);
  parser.AddFlag("--quiet", "no output", &flag);
  parser.AddStringList("--inputs", "NAMES", "inputs", &list).Default("found automatically");
  const std::string help = parser.Help();
  const auto line_of = [&help](const std::string& flag) {
    const size_t at = help.find("  " + flag + " ");
    return at == std::string::npos ? std::string() : help.substr(at, help.find('\n', at) - at);
  };
  EXPECT_NE(line_of("--name").find("a name (default: alice)"), std::string::npos) << help;
  EXPECT_EQ(line_of("--file").find("default"), std::string::npos) << help;
  EXPECT_NE(line_of("--count").find("a count (default: 5)"), std::string::npos) << help;
  EXPECT_NE(line_of("--batch").find("a batch (default: the model's)"), std::string::npos) << help;
  EXPECT_NE(line_of("--eval").find("(default: 16 for nmt)"), std::string::npos) << help;
  EXPECT_NE(line_of("--top").find("rows (default: 0)"), std::string::npos) << help;
  EXPECT_NE(line_of("--hours").find("hours (default: 1.5)"), std::string::npos) << help;
  EXPECT_EQ(line_of("--max-cost").find("default"), std::string::npos) << help;
  EXPECT_EQ(line_of("--quiet").find("default"), std::string::npos) << help;
  EXPECT_NE(line_of("--inputs").find("(default: found automatically)"), std::string::npos) << help;
  EXPECT_EQ(help.find("-1"), std::string::npos) << help;
}

TEST(ArgParserTest, HelpWrapsLongTextWithinOneHundredColumns) {
  std::string strategy = "auto";
  const std::string text =
      "how layers are split: a planner, or a plan file's strategies; this text is long enough to "
      "need two lines of help at one hundred columns and then some";
  ArgParser parser("tessera test", "A test command.");
  parser.AddString("--strategy", "auto|data|model|late|PLAN.json", text, &strategy);
  const std::vector<std::string> lines = absl::StrSplit(parser.Help(), '\n');
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << line;
  // A flag too wide for its column puts its text on the next lines, at column 26, every word
  // kept and the default last.
  auto flag = std::find(lines.begin(), lines.end(), "  --strategy auto|data|model|late|PLAN.json");
  ASSERT_NE(flag, lines.end()) << parser.Help();
  std::string joined;
  for (auto it = flag + 1; it != lines.end() && it->rfind(std::string(26, ' '), 0) == 0; ++it) {
    absl::StrAppend(&joined, joined.empty() ? "" : " ", it->substr(26));
  }
  EXPECT_EQ(joined, text + " (default: auto)");
  EXPECT_GE(std::count_if(flag + 1, lines.end(),
                          [](const std::string& l) { return l.rfind("      ", 0) == 0; }),
            2);
}

// Suggestions (the cases above) only when a name is close, and still a usage error.
TEST(ArgParserTest, NothingCloseSuggestsNothingAndUnknownOptionsExitTwo) {
  Parsed p;
  ArgParser parser = MakeParser(p);
  absl::Status far = parser.Parse({"m", "--bogus"});
  EXPECT_EQ(far.message().find("did you mean"), std::string::npos) << far.message();
  ArgParser again = MakeParser(p);
  std::ostringstream out, err;
  EXPECT_EQ(again.ParseOrExitCode({"m", "--batc", "8"}, out, err), 2);
  EXPECT_NE(err.str().find("did you mean '--batch'?"), std::string::npos) << err.str();
}

TEST(ArgParserTest, ByteSizeTakesAUnitAndRefusesZero) {
  int64_t bytes = 0;
  ArgParser parser("tessera test", "A test command.");
  parser.AddByteSize("--bucket-size", "SIZE", "bucket size", &bytes);
  ASSERT_TRUE(parser.Parse({"--bucket-size", "4MiB"}).ok());
  EXPECT_EQ(bytes, 4 << 20);
  for (const char* bad : {"0", "0B", "4 XB", "-1"}) {
    bytes = 7;
    ArgParser p("tessera test", "A test command.");
    p.AddByteSize("--bucket-size", "SIZE", "bucket size", &bytes);
    absl::Status s = p.Parse({"--bucket-size", bad});
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("--bucket-size"), std::string::npos) << s.message();
    EXPECT_EQ(bytes, 7) << bad;  // left unchanged
  }
}

}  // namespace
}  // namespace tessera::tools
