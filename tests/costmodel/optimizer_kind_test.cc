// The one optimizer enum: names round-trip, unknown names are refused naming the known ones,
// and the state each keeps per parameter value.
#include "tessera/costmodel/optimizer_kind.h"

#include <gtest/gtest.h>

namespace tessera::costmodel {
namespace {

TEST(OptimizerKindTest, NamesRoundTrip) {
  for (OptimizerKind k : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam}) {
    absl::StatusOr<OptimizerKind> parsed = ParseOptimizerKind(OptimizerName(k));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, k);
  }
}

TEST(OptimizerKindTest, UnknownNameListsTheKnownOnes) {
  absl::StatusOr<OptimizerKind> parsed = ParseOptimizerKind("lamb");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("'lamb'"), std::string::npos);
  EXPECT_NE(parsed.status().message().find("sgd, momentum or adam"), std::string::npos);
}

TEST(OptimizerKindTest, StateSlots) {
  EXPECT_EQ(OptimizerStateSlots(OptimizerKind::kSgd), 0);
  EXPECT_EQ(OptimizerStateSlots(OptimizerKind::kMomentum), 1);
  EXPECT_EQ(OptimizerStateSlots(OptimizerKind::kAdam), 2);
}

}  // namespace
}  // namespace tessera::costmodel
