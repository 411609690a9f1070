// A library error about one of the caller's settings (base/setting_error.h) said in the
// command's terms: the flag that sets it is appended to the message.
//
//   const FlagNames flags = {{"devices", "--workers"}, {"symbolic_dims", "--dim {}=N"}};
//   err << WithFlag(status, flags).message();
//       // "... does not divide evenly over 3 devices; ... (--workers)"
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"

namespace tessera::tools {

// Setting name -> how the command sets it; "{}" stands for the setting's detail (the part
// after '/' in "symbolic_dims/seq").
using FlagNames = std::map<std::string, std::string, std::less<>>;

// `status` with " (<flag>)" appended when its setting is in `flags`; otherwise unchanged.
absl::Status WithFlag(const absl::Status& status, const FlagNames& flags);

// What `tessera plan` and `tessera memory` set the planner's settings with.
inline const FlagNames kPlanFlags = {{"devices", "--devices"},
                                     {"batch", "--batch"},
                                     {"cluster", "--cluster FILE"},
                                     {"symbolic_dims", "--dim {}=N"}};

}  // namespace tessera::tools
