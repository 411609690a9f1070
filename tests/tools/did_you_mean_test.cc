#include "tessera/tools/cli/did_you_mean.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::tools {
namespace {

TEST(DidYouMeanTest, EditDistanceCountsASwapOfNeighboursAsOneEdit) {
  EXPECT_EQ(EditDistance("plan", "plan"), 0);
  EXPECT_EQ(EditDistance("plna", "plan"), 1);         // swap
  EXPECT_EQ(EditDistance("--worker", "--workers"), 1);  // insert
  EXPECT_EQ(EditDistance("trian", "train"), 1);
  EXPECT_EQ(EditDistance("memroy", "memory"), 1);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("", "abc"), 3);
}

TEST(DidYouMeanTest, SuggestsOnlyWhatIsClose) {
  const std::vector<std::string> commands = {"inspect", "plan", "recommend", "memory",
                                             "calibrate", "train"};
  EXPECT_EQ(DidYouMean("plna", commands), "plan");
  EXPECT_EQ(DidYouMean("recomend", commands), "recommend");
  EXPECT_EQ(DidYouMean("trian", commands), "train");
  EXPECT_EQ(DidYouMean("calibrat", commands), "calibrate");
  EXPECT_EQ(DidYouMean("rec", commands), "recommend");  // the only one it begins
  EXPECT_EQ(DidYouMean("bogus", commands), std::nullopt);
  EXPECT_EQ(DidYouMean("pl", commands), std::nullopt);     // too short to guess from
  EXPECT_EQ(DidYouMean("xyzw", commands), std::nullopt);
  // Short words allow one edit: "tran" is train, "mmry" is not memory.
  EXPECT_EQ(DidYouMean("tran", commands), "train");
  EXPECT_EQ(DidYouMean("mmry", commands), std::nullopt);
}

TEST(DidYouMeanTest, OptionsIgnoreTheirDashesForLengthAndTiesSuggestNothing) {
  const std::vector<std::string> flags = {"--workers", "--comm", "--steps", "--seed", "--lr"};
  EXPECT_EQ(DidYouMean("--worker", flags), "--workers");
  EXPECT_EQ(DidYouMean("--sted", flags), "--seed");  // 1 edit; --steps is 2
  EXPECT_EQ(DidYouMean("--lx", flags), "--lr");
  EXPECT_EQ(DidYouMean("-x", {"-o"}), std::nullopt);  // a one-letter word allows no edit
  EXPECT_EQ(DidYouMean("--cab", {"--cat", "--car"}), std::nullopt);  // a tie
  EXPECT_EQ(DidYouMean("--comn", flags), "--comm");
  EXPECT_EQ(SuggestionText("--worker", flags), "; did you mean '--workers'?");
  EXPECT_EQ(SuggestionText("--bogus", flags), "");
}

}  // namespace
}  // namespace tessera::tools
