// Plan files read back (plan_file.h): every error names the file and the field's path, e.g.
// "p.json: layers[3] (\"fc1\").layouts.output: unknown layout 'diagonal'; ...". Plan files
// carry many fields; those not read here are allowed and ignored.
#include "tessera/partitioner/plan_file.h"

#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/json_reader.h"
#include "tessera/base/status_macros.h"

namespace tessera::partitioner {

namespace {

using base::JsonField;

// A plan file nests about 5 deep (layers[i].layouts.inputs[j]); more fields are welcome.
constexpr base::JsonFormat kJsonFormat = {.expected = "a Tessera plan file (a JSON object)",
                                          .max_nesting = 64};

// The optional "layouts": {"output": NAME} of a layer (older plan files have none): which of
// the layer's options that share its strategy the plan chose.
absl::StatusOr<std::optional<Layout>> OutputLayout(const JsonField& layer) {
  if (!layer.Has("layouts")) return std::nullopt;
  const JsonField layouts = layer.MemberOrDie("layouts");
  TS_RETURN_IF_ERROR(layouts.RequireOpenObject());
  if (!layouts.Has("output")) return std::nullopt;
  const JsonField output = layouts.MemberOrDie("output");
  if (!output.value().is_string()) return output.TypeError("a layout name");
  absl::StatusOr<Layout> layout = ParseLayout(output.value().get_ref<const std::string&>());
  if (!layout.ok()) return output.Error(layout.status().message());
  return *layout;
}

// Adds layers[i] to `out`; `seen_at` holds the path where each name was first seen.
absl::Status ReadLayer(const JsonField& element, PlanFileStrategies& out,
                       std::map<std::string, std::string>& seen_at) {
  TS_RETURN_IF_ERROR(element.RequireOpenObject());
  TS_ASSIGN_OR_RETURN(const JsonField name_field, element.Member("name"));
  TS_ASSIGN_OR_RETURN(const std::string name, name_field.String());
  const JsonField layer = element.Labeled(name);
  TS_ASSIGN_OR_RETURN(const JsonField strategy_field, layer.Member("strategy"));
  TS_ASSIGN_OR_RETURN(const std::string strategy_name, strategy_field.String());
  absl::StatusOr<Strategy> strategy = ParseStrategy(strategy_name);
  if (!strategy.ok()) return strategy_field.Error(strategy.status().message());
  TS_ASSIGN_OR_RETURN(const std::optional<Layout> output, OutputLayout(layer));
  if (const auto [at, added] = seen_at.emplace(name, element.path()); !added) {
    return layer.Error(absl::StrCat("the layer ", base::Quote(name), " appears twice (also ",
                                    at->second, ")"));
  }
  out.strategies.emplace(name, *strategy);
  if (output.has_value()) out.output_layouts.emplace(name, *output);
  return absl::OkStatus();
}

// root.<outer>.<inner> when both exist (of any type).
std::optional<JsonField> Find(const JsonField& root, absl::string_view outer,
                              absl::string_view inner) {
  if (!root.Has(outer)) return std::nullopt;
  const JsonField parent = root.MemberOrDie(outer);
  if (!parent.Has(inner)) return std::nullopt;  // Has is false on non-objects
  return parent.MemberOrDie(inner);
}

// "model.name" and "cluster.devices" describe the plan; as before, either is read when it
// has its type (a string; an integer) and is otherwise left unset.
absl::Status ReadDescription(const JsonField& root, PlanFileStrategies& out) {
  if (const auto name = Find(root, "model", "name"); name && name->value().is_string()) {
    TS_ASSIGN_OR_RETURN(out.model, name->String());
  }
  if (const auto devices = Find(root, "cluster", "devices");
      devices && devices->value().is_number_integer()) {
    TS_ASSIGN_OR_RETURN(const int64_t count, devices->IntInRange(std::numeric_limits<int>::min(),
                                                                 std::numeric_limits<int>::max()));
    out.devices = static_cast<int>(count);
  }
  return absl::OkStatus();
}

// The optional "gradient_buckets" object (older plan files have none): both sizes, in bytes.
absl::Status ReadBuckets(const JsonField& root, PlanFileStrategies& out) {
  if (!root.Has("gradient_buckets")) return absl::OkStatus();
  const JsonField buckets = root.MemberOrDie("gradient_buckets");
  TS_RETURN_IF_ERROR(buckets.RequireOpenObject());
  constexpr int64_t kMaxBucketBytes = int64_t{1} << 40;
  TS_ASSIGN_OR_RETURN(const JsonField first, buckets.Member("first_bucket_bytes"));
  TS_ASSIGN_OR_RETURN(out.first_bucket_bytes, first.IntInRange(1, kMaxBucketBytes));
  TS_ASSIGN_OR_RETURN(const JsonField later, buckets.Member("bucket_bytes"));
  TS_ASSIGN_OR_RETURN(out.bucket_bytes, later.IntInRange(1, kMaxBucketBytes));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PlanFileStrategies> ParsePlanStrategies(absl::string_view text,
                                                       absl::string_view source_name) {
  TS_ASSIGN_OR_RETURN(const nlohmann::json doc,
                      base::ParseJson(text, source_name, kJsonFormat));
  const JsonField root(doc, source_name);
  if (!doc.is_object()) return root.TypeError(kJsonFormat.expected);
  PlanFileStrategies out;
  TS_RETURN_IF_ERROR(ReadDescription(root, out));
  TS_RETURN_IF_ERROR(ReadBuckets(root, out));
  TS_ASSIGN_OR_RETURN(const JsonField layers, root.Member("layers"));
  TS_ASSIGN_OR_RETURN(const size_t n, layers.ArraySize("an array of layers"));
  std::map<std::string, std::string> seen_at;
  for (size_t i = 0; i < n; ++i) {
    TS_RETURN_IF_ERROR(ReadLayer(layers.Element(i), out, seen_at));
  }
  return out;
}

absl::StatusOr<PlanFileStrategies> ReadPlanStrategies(const std::string& path) {
  TS_ASSIGN_OR_RETURN(std::string text, base::ReadFileText(path, "plan file", 1 << 30));
  return ParsePlanStrategies(text, path);
}

}  // namespace tessera::partitioner
