// Library errors in the command's terms: the flag behind the setting appended, with the
// setting's detail where the flag takes it; other errors unchanged.
#include "tessera/tools/cli/flag_hint.h"

#include <gtest/gtest.h>

#include "tessera/base/setting_error.h"

namespace tessera::tools {
namespace {

TEST(FlagHintTest, AppendsTheFlagOfTheSetting) {
  const FlagNames flags = {{"devices", "--workers"}, {"symbolic_dims", "--dim {}=N"}};
  const absl::Status devices =
      base::SettingError(absl::InvalidArgumentError("3 devices do not divide 32"), "devices");
  EXPECT_EQ(WithFlag(devices, flags).message(), "3 devices do not divide 32 (--workers)");
  EXPECT_EQ(WithFlag(devices, flags).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status dims =
      base::SettingError(absl::InvalidArgumentError("'seq' is symbolic"), "symbolic_dims/seq");
  EXPECT_EQ(WithFlag(dims, flags).message(), "'seq' is symbolic (--dim seq=N)");
  const absl::Status other = base::SettingError(absl::NotFoundError("no local"), "cluster");
  EXPECT_EQ(WithFlag(other, flags).message(), "no local");  // no flag for it here
  EXPECT_EQ(WithFlag(absl::InternalError("x"), flags).message(), "x");
}

}  // namespace
}  // namespace tessera::tools
