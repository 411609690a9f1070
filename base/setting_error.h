// Errors about one of the caller's settings. A library names the setting as its API does
// ("devices", "batch"), never by a command-line flag; the command that set it from a flag maps
// it back (tools/cli/flag_hint.h), so that `tessera plan` says --devices where `tessera train`
// says --workers for the same planner error.
//
//   return base::SettingError(absl::InvalidArgumentError("the global batch 30 does not divide "
//                                                        "over 4 devices"), "batch");
//   base::SettingOf(status);   // "batch"
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::base {

// `status` marked as caused by the setting `field` (a payload; the message is unchanged).
absl::Status SettingError(absl::Status status, absl::string_view field);
// The setting `status` was marked with, if any.
std::optional<std::string> SettingOf(const absl::Status& status);

// `status` with `prefix` before its message (context such as a file or a rank), keeping its
// code and its marks: what callers up the stack use instead of building a new Status.
absl::Status WithPrefix(const absl::Status& status, absl::string_view prefix);

}  // namespace tessera::base
