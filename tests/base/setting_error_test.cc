// A library error marked with the setting that caused it keeps its code and message.
#include "tessera/base/setting_error.h"

#include <gtest/gtest.h>

namespace tessera::base {
namespace {

TEST(SettingErrorTest, MarksTheSettingAndKeepsTheError) {
  const absl::Status s = SettingError(absl::InvalidArgumentError("4 does not divide 6"), "batch");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "4 does not divide 6");
  EXPECT_EQ(SettingOf(s), "batch");
  EXPECT_EQ(SettingOf(absl::InvalidArgumentError("x")), std::nullopt);
  EXPECT_TRUE(SettingError(absl::OkStatus(), "batch").ok());
}

}  // namespace
}  // namespace tessera::base
