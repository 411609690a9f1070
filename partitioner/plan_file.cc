// Plan files read back (plan_file.h).
#include "tessera/partitioner/plan_file.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"

namespace tessera::partitioner {

absl::StatusOr<PlanFileStrategies> ParsePlanStrategies(absl::string_view text,
                                                       absl::string_view source_name) {
  const auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": not a Tessera plan file (",
                                                   what, "); write one with `tessera plan "
                                                   "MODEL ... --format json -o FILE`"));
  };
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("it is not a JSON object");
  const auto layers = j.find("layers");
  if (layers == j.end() || !layers->is_array()) return bad("no \"layers\" array");
  PlanFileStrategies out;
  if (auto m = j.find("model"); m != j.end() && m->is_object() && m->contains("name") &&
                                (*m)["name"].is_string()) {
    out.model = (*m)["name"].get<std::string>();
  }
  if (auto c = j.find("cluster"); c != j.end() && c->is_object() && c->contains("devices") &&
                                  (*c)["devices"].is_number_integer()) {
    out.devices = (*c)["devices"].get<int>();
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    const nlohmann::json& l = (*layers)[i];
    if (!l.is_object() || !l.contains("name") || !l["name"].is_string() ||
        !l.contains("strategy") || !l["strategy"].is_string()) {
      return bad(absl::StrCat("layers[", i, "] needs string fields \"name\" and \"strategy\""));
    }
    const std::string name = l["name"].get<std::string>();
    absl::StatusOr<Strategy> s = ParseStrategy(l["strategy"].get<std::string>());
    if (!s.ok()) return bad(absl::StrCat("layer '", name, "': ", s.status().message()));
    if (!out.strategies.emplace(name, *s).second) {
      return bad(absl::StrCat("layer '", name, "' appears twice"));
    }
  }
  return out;
}

absl::StatusOr<PlanFileStrategies> ReadPlanStrategies(const std::string& path) {
  TS_ASSIGN_OR_RETURN(std::string text, base::ReadFileText(path, "plan file", 1 << 30));
  return ParsePlanStrategies(text, path);
}

}  // namespace tessera::partitioner
