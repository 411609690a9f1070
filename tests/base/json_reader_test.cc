// The JSON reader (base/json_reader.h): parse errors name the source, deep nesting is refused
// before parsing, and every field error reads "<source>: <path>: <what>".
#include "tessera/base/json_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace tessera::base {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr JsonFormat kFormat = {.expected = "a test file", .max_nesting = 8};

Json Parse(absl::string_view text) {
  absl::StatusOr<Json> doc = ParseJson(text, "t.json", kFormat);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return doc.ok() ? *doc : Json();
}

std::string ParseError(absl::string_view text) {
  absl::StatusOr<Json> doc = ParseJson(text, "t.json", kFormat);
  EXPECT_FALSE(doc.ok()) << text;
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(doc.status().message());
}

template <class T>
std::string ErrorOf(const absl::StatusOr<T>& r) {
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

TEST(JsonReaderTest, ParseErrorsNameTheSourceAndWhere) {
  EXPECT_EQ(ParseError(" \n\t"), "t.json: the file is empty; expected a test file");
  EXPECT_THAT(ParseError("{\"a\": 1,\n}"),
              HasSubstr("t.json: not valid JSON: parse error at line 2, column 1"));
  EXPECT_THAT(ParseError("{} {}"), HasSubstr("t.json: not valid JSON: "));
  EXPECT_THAT(ParseError("[1e400]"), HasSubstr("number overflow"));
  EXPECT_EQ(Parse("\xef\xbb\xbf{\"a\": [1]}"), Json::parse(R"({"a": [1]})"));  // a BOM is fine
}

TEST(JsonReaderTest, NestingDeeperThanTheFormatsIsRefusedBeforeParsing) {
  EXPECT_EQ(ParseError(std::string(1000000, '[')),
            "t.json: values nest more than 8 levels deep (at byte 8); expected a test file");
  EXPECT_THAT(ParseError(R"({"a": )" + std::string(9, '{')), HasSubstr("at byte 13"));
  // Exactly the limit parses; brackets inside strings (escaped quotes too) do not count.
  EXPECT_TRUE(ParseJson(std::string(8, '[') + std::string(8, ']'), "t.json", kFormat).ok());
  const std::string text = R"({"s": "\"[[[[[[[[[[[[{{{{{{{{"})";
  EXPECT_EQ(Parse(text)["s"], "\"[[[[[[[[[[[[{{{{{{{{");
}

TEST(JsonReaderTest, BadUtf8IsAnErrorNotACrash) {
  EXPECT_THAT(ParseError("{\"a\": \"\xff\xfe\"}"), HasSubstr("t.json: not valid JSON"));
  EXPECT_THAT(ParseError("\xff"), HasSubstr("t.json: not valid JSON"));
  // A document built in memory (not parsed) may hold invalid UTF-8: describing it is safe.
  const Json bad = std::string("\xff\xfe");
  EXPECT_EQ(ErrorOf(JsonField(bad, "t.json", "x").Int()),
            "t.json: x: expected an integer, got \"\xff\xfe\"");
}

TEST(JsonReaderTest, ErrorsCarryTheFieldsPath) {
  const Json doc = Parse(R"({"nodes": [{"name": "conv1", "attrs": {"strides": [1, "2"]}}]})");
  const JsonField root(doc, "model.json");
  EXPECT_EQ(root.Error("bad").message(), "model.json: bad");
  absl::StatusOr<JsonField> nodes = root.Member("nodes");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(*nodes->ArraySize(), 1u);
  const JsonField node = nodes->Element(0).Labeled("conv1");
  EXPECT_EQ(node.path(), "nodes[0] (\"conv1\")");
  EXPECT_EQ(ErrorOf(node.MemberOrDie("attrs").MemberOrDie("strides").IntArray()),
            "model.json: nodes[0] (\"conv1\").attrs.strides[1]: expected an integer, got \"2\"");
  EXPECT_EQ(ErrorOf(node.Member("op")), "model.json: nodes[0] (\"conv1\"): missing field \"op\"");
  EXPECT_EQ(ErrorOf(node.MemberOrDie("name").Member("x")),
            "model.json: nodes[0] (\"conv1\").name: expected an object, got \"conv1\"");
  EXPECT_EQ(ErrorOf(node.MemberOrDie("name").ArraySize("an array of names")),
            "model.json: nodes[0] (\"conv1\").name: expected an array of names, got \"conv1\"");
  EXPECT_FALSE(node.MemberOrDie("name").Has("x"));  // Has is false on non-objects
}

TEST(JsonReaderTest, UnknownFieldsAreNamedWithTheAllowedOnes) {
  const Json doc = Parse(R"({"a": 1, "colour": "blue"})");
  const JsonField root(doc, "c.json");
  EXPECT_TRUE(root.RequireObject({"a", "colour", "b"}).ok());
  EXPECT_EQ(root.RequireObject({"a", "b"}).message(),
            "c.json: unknown field \"colour\"; expected one of \"a\", \"b\"");
  EXPECT_EQ(root.MemberOrDie("a").RequireObject({"x"}).message(),
            "c.json: a: expected an object, got 1");
  const Json empty_attrs = Parse(R"({"k": 2})");
  EXPECT_EQ(JsonField(empty_attrs, "c.json", "attrs").RequireObject({}).message(),
            "c.json: attrs: unknown field \"k\"; expected none");
  EXPECT_TRUE(root.RequireOpenObject().ok());
  EXPECT_EQ(root.MemberOrDie("colour").RequireOpenObject().message(),
            "c.json: colour: expected an object, got \"blue\"");
  // A long unknown name is cut, not copied whole into the message.
  const Json long_key = Json::object({{std::string(1000, 'k'), 1}});
  EXPECT_LT(JsonField(long_key, "c.json").RequireObject({"a"}).message().size(), 200u);
}

TEST(JsonReaderTest, TypedValues) {
  const Json doc = Parse(R"({"i": -3, "u": 18446744073709551615, "f": 4.0, "d": 0.5,
      "inf": "inf", "b": true, "one": 1, "s": "", "ds": [1, "-inf", "nan"], "bad": [1, "x"]})");
  const JsonField r(doc, "v.json");
  EXPECT_EQ(*r.MemberOrDie("i").Int(), -3);
  EXPECT_EQ(ErrorOf(r.MemberOrDie("u").Int()),
            "v.json: u: integer 18446744073709551615 is too large (at most 9223372036854775807)");
  EXPECT_EQ(ErrorOf(r.MemberOrDie("f").Int()), "v.json: f: expected an integer, got 4.0");
  EXPECT_EQ(*r.MemberOrDie("d").Double(), 0.5);
  EXPECT_EQ(*r.MemberOrDie("inf").Double(), std::numeric_limits<double>::infinity());
  EXPECT_THAT(ErrorOf(r.MemberOrDie("s").Double()), HasSubstr("v.json: s: expected a number"));
  EXPECT_EQ(*r.MemberOrDie("b").Bool(), true);
  EXPECT_EQ(ErrorOf(r.MemberOrDie("one").Bool()), "v.json: one: expected true or false, got 1");
  EXPECT_EQ(*r.MemberOrDie("s").String(), "");
  EXPECT_EQ(ErrorOf(r.MemberOrDie("s").NonEmptyString()),
            "v.json: s: expected a non-empty string");
  const std::vector<double> ds = *r.MemberOrDie("ds").DoubleArray();
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(ds[2]));
  EXPECT_EQ(ErrorOf(r.MemberOrDie("bad").DoubleArray()),
            "v.json: bad[1]: expected a number (or \"inf\", \"-inf\", \"nan\"), got \"x\"");
  EXPECT_EQ(ErrorOf(r.MemberOrDie("u").IntArray()),
            "v.json: u: expected an array of integers, got 18446744073709551615");
}

TEST(JsonReaderTest, RangesSayWhatIsAllowed) {
  const Json doc = Parse(R"({"zero": 0, "big": 18446744073709551615, "e": 1.6e10, "half": 8.5,
      "huge": 1e300, "neg": -1e-06, "s": "8"})");
  const JsonField r(doc, "r.json");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr JsonInteger kLiteral = JsonInteger::kLiteral, kIntegral = JsonInteger::kIntegralNumber;
  EXPECT_EQ(*r.MemberOrDie("zero").IntInRange(0, 5), 0);
  EXPECT_EQ(*r.MemberOrDie("e").IntInRange(1, kMax, kIntegral), int64_t{16000000000});
  const struct {
    const char* key;
    int64_t min, max;
    JsonInteger form;
    const char* error;
  } ints[] = {
      {"zero", 1, 1000000, kLiteral, "r.json: zero: got 0; allowed: 1 to 1000000"},
      {"big", 1, 10, kLiteral, "r.json: big: got 18446744073709551615; allowed: 1 to 10"},
      {"s", 1, 10, kIntegral, "r.json: s: expected an integer, got \"8\""},
      // Integral numbers with an exponent only where the format allows them.
      {"e", 1, kMax, kLiteral, "r.json: e: expected an integer, got 16000000000.0"},
      {"half", 1, 10, kIntegral, "r.json: half: expected an integer, got 8.5"},
      {"huge", 1, kMax, kIntegral, "r.json: huge: got 1e+300; allowed: 1 to 9223372036854775807"},
  };
  for (const auto& c : ints) {
    EXPECT_EQ(ErrorOf(r.MemberOrDie(c.key).IntInRange(c.min, c.max, c.form)), c.error);
  }
  EXPECT_EQ(*r.MemberOrDie("zero").NumberInRange(0, 1), 0);
  EXPECT_EQ(ErrorOf(r.MemberOrDie("zero").NumberAbove(0, 1e15)),
            "r.json: zero: got 0; allowed: > 0 and <= 1e+15");
  const struct {
    const char* key;
    double min, max;
    const char* error;
  } numbers[] = {
      {"neg", 0, 10, "r.json: neg: got -1e-06; allowed: >= 0 and <= 10"},
      {"huge", 0, 1e18, "r.json: huge: got 1e+300; allowed: >= 0 and <= 1e+18"},
      {"s", 0, 10, "r.json: s: expected a number, got \"8\""},
  };
  for (const auto& c : numbers) {
    EXPECT_EQ(ErrorOf(r.MemberOrDie(c.key).NumberInRange(c.min, c.max)), c.error);
  }
}

TEST(JsonReaderTest, DescribeAndQuoteStayShort) {
  EXPECT_EQ(DescribeJson(Json::array()), "an empty array");
  EXPECT_EQ(DescribeJson(Json::array({1, 2})), "an array of 2 values");
  EXPECT_EQ(DescribeJson(Json::object()), "an empty object");
  EXPECT_EQ(DescribeJson(nullptr), "null");
  EXPECT_EQ(Quote("ab"), "\"ab\"");
  // Cut at 64 bytes, backing up to the start of a UTF-8 sequence ("é" is 2 bytes).
  const std::string text = std::string(63, 'a') + "\xc3\xa9" + std::string(100, 'b');
  EXPECT_EQ(Quote(text), "\"" + std::string(63, 'a') + "...\"");
}

}  // namespace
}  // namespace tessera::base
