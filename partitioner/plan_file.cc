// Plan files read back (plan_file.h).
#include "tessera/partitioner/plan_file.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"

namespace tessera::partitioner {

namespace {

using nlohmann::json;

// The optional "layouts": {"output": NAME} of a layer (older plan files have none): which of
// the layer's options that share its strategy the plan chose. The error is the reason only.
absl::StatusOr<std::optional<Layout>> OutputLayout(const json& layer) {
  const auto layouts = layer.find("layouts");
  if (layouts == layer.end()) return std::nullopt;
  if (!layouts->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"layouts\" is ", layouts->dump(), ", not an object"));
  }
  const auto output = layouts->find("output");
  if (output == layouts->end()) return std::nullopt;
  if (!output->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"layouts\".\"output\" is ", output->dump(), ", not a layout name"));
  }
  return ParseLayout(output->get<std::string>());
}

// Adds layers[i] to `out`; the error is what `bad` wraps.
absl::Status ReadLayer(const json& l, size_t i, PlanFileStrategies& out) {
  if (!l.is_object() || !l.contains("name") || !l["name"].is_string() ||
      !l.contains("strategy") || !l["strategy"].is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("layers[", i, "] needs string fields \"name\" and \"strategy\""));
  }
  const std::string name = l["name"].get<std::string>();
  const auto in_layer = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("layer '", name, "': ", s.message()));
  };
  absl::StatusOr<Strategy> s = ParseStrategy(l["strategy"].get<std::string>());
  if (!s.ok()) return in_layer(s.status());
  absl::StatusOr<std::optional<Layout>> output = OutputLayout(l);
  if (!output.ok()) return in_layer(output.status());
  if (!out.strategies.emplace(name, *s).second) {
    return absl::InvalidArgumentError(absl::StrCat("layer '", name, "' appears twice"));
  }
  if (output->has_value()) out.output_layouts.emplace(name, **output);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PlanFileStrategies> ParsePlanStrategies(absl::string_view text,
                                                       absl::string_view source_name) {
  const auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": not a Tessera plan file (",
                                                   what, "); write one with `tessera plan "
                                                   "MODEL ... --format json -o FILE`"));
  };
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
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
    if (absl::Status s = ReadLayer((*layers)[i], i, out); !s.ok()) return bad(s.message());
  }
  return out;
}

absl::StatusOr<PlanFileStrategies> ReadPlanStrategies(const std::string& path) {
  TS_ASSIGN_OR_RETURN(std::string text, base::ReadFileText(path, "plan file", 1 << 30));
  return ParsePlanStrategies(text, path);
}

}  // namespace tessera::partitioner
