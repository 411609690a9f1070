// Errors about a caller's setting (setting_error.h).
#include "tessera/base/setting_error.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace tessera::base {
namespace {
constexpr absl::string_view kPayload = "tessera.dev/setting";
}  // namespace

absl::Status SettingError(absl::Status status, absl::string_view field) {
  if (!status.ok()) status.SetPayload(kPayload, absl::Cord(field));
  return status;
}

std::optional<std::string> SettingOf(const absl::Status& status) {
  const absl::optional<absl::Cord> field = status.GetPayload(kPayload);
  if (!field.has_value()) return std::nullopt;
  return std::string(*field);
}

absl::Status WithPrefix(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

}  // namespace tessera::base
