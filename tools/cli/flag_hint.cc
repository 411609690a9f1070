// Library errors mapped to the command's flags (flag_hint.h).
#include "tessera/tools/cli/flag_hint.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tessera/base/setting_error.h"

namespace tessera::tools {

absl::Status WithFlag(const absl::Status& status, const FlagNames& flags) {
  const std::optional<std::string> setting = base::SettingOf(status);
  if (!setting.has_value()) return status;
  const size_t slash = setting->find('/');
  const std::string name = setting->substr(0, slash);
  const std::string detail = slash == std::string::npos ? "" : setting->substr(slash + 1);
  const auto it = flags.find(name);
  if (it == flags.end()) return status;
  const std::string flag = absl::StrReplaceAll(it->second, {{"{}", detail}});
  return absl::Status(status.code(), absl::StrCat(status.message(), " (", flag, ")"));
}

}  // namespace tessera::tools
