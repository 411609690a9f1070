#include "tessera/tools/cli/arg_parser.h"

#include <gtest/gtest.h>

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
