// The run record of a checkpoint directory (run_record.h).
#include "tessera/exec/run_record.h"

#include <filesystem>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/json_reader.h"
#include "tessera/base/status_macros.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/partitioner/plan_output.h"

namespace tessera::exec {
namespace {

using base::JsonField;

constexpr int64_t kMaxRecordBytes = int64_t{1} << 30;
constexpr base::JsonFormat kRecordFormat = {.expected = "a checkpoint's plan (a JSON object)"};

std::string PlanPath(const std::string& dir) { return dir + "/plan.json"; }
std::string LegacyPath(const std::string& dir) { return dir + "/manifest.json"; }

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

absl::Status AsDataLoss(const absl::Status& s, const std::string& dir) {
  return absl::DataLossError(absl::StrCat(s.message(), "; the checkpoints of ", dir,
                                          " cannot be matched to this run"));
}

// `object`'s "workers" and "batch" (both records have them).
absl::Status ReadWorkersAndBatch(const JsonField& object, RunRecord& r) {
  TS_ASSIGN_OR_RETURN(const JsonField workers, object.Member("workers"));
  TS_ASSIGN_OR_RETURN(const int64_t w, workers.IntInRange(1, std::numeric_limits<int>::max()));
  r.workers = static_cast<int>(w);
  TS_ASSIGN_OR_RETURN(const JsonField batch, object.Member("batch"));
  TS_ASSIGN_OR_RETURN(r.batch, batch.IntInRange(1, std::numeric_limits<int64_t>::max()));
  return absl::OkStatus();
}

// "run": {"workers", "batch", "optimizer", "seed"}.
absl::Status ReadRun(const JsonField& root, RunRecord& r) {
  TS_ASSIGN_OR_RETURN(const JsonField run, root.Member("run"));
  TS_RETURN_IF_ERROR(run.RequireObject({"workers", "batch", "optimizer", "seed"}));
  TS_RETURN_IF_ERROR(ReadWorkersAndBatch(run, r));
  TS_ASSIGN_OR_RETURN(const JsonField optimizer, run.Member("optimizer"));
  TS_ASSIGN_OR_RETURN(const std::string name, optimizer.String());
  absl::StatusOr<costmodel::OptimizerKind> kind = costmodel::ParseOptimizerKind(name);
  if (!kind.ok()) return optimizer.Error(kind.status().message());
  r.optimizer = *kind;
  TS_ASSIGN_OR_RETURN(const JsonField seed, run.Member("seed"));
  TS_ASSIGN_OR_RETURN(const int64_t s, seed.IntInRange(0, std::numeric_limits<int64_t>::max()));
  r.seed = static_cast<uint64_t>(s);
  return absl::OkStatus();
}

absl::StatusOr<RunRecord> ReadPlanRecord(const std::string& path) {
  TS_ASSIGN_OR_RETURN(const std::string text,
                      base::ReadFileText(path, "checkpoint plan", kMaxRecordBytes));
  TS_ASSIGN_OR_RETURN(partitioner::PlanFileStrategies plan,
                      partitioner::ParsePlanStrategies(text, path));
  TS_ASSIGN_OR_RETURN(const nlohmann::json doc, base::ParseJson(text, path, kRecordFormat));
  RunRecord r{.model = plan.model, .strategies = std::move(plan.strategies),
              .output_layouts = std::move(plan.output_layouts),
              .first_bucket_bytes = plan.first_bucket_bytes, .bucket_bytes = plan.bucket_bytes};
  TS_RETURN_IF_ERROR(ReadRun(JsonField(doc, path), r));
  return r;
}

// DIR/manifest.json of earlier versions: {"model", "workers", "batch", "layers": {name:
// strategy}}.
absl::StatusOr<RunRecord> ReadLegacyRecord(const std::string& path) {
  TS_ASSIGN_OR_RETURN(const std::string text,
                      base::ReadFileText(path, "checkpoint manifest", kMaxRecordBytes));
  TS_ASSIGN_OR_RETURN(const nlohmann::json doc, base::ParseJson(text, path, kRecordFormat));
  const JsonField root(doc, path);
  TS_RETURN_IF_ERROR(root.RequireOpenObject());
  RunRecord r;
  TS_ASSIGN_OR_RETURN(const JsonField model, root.Member("model"));
  TS_ASSIGN_OR_RETURN(r.model, model.String());
  TS_RETURN_IF_ERROR(ReadWorkersAndBatch(root, r));
  TS_ASSIGN_OR_RETURN(const JsonField layers, root.Member("layers"));
  TS_RETURN_IF_ERROR(layers.RequireOpenObject());
  for (const auto& [name, value] : doc.at("layers").items()) {
    const JsonField layer = layers.MemberOrDie(name);
    TS_ASSIGN_OR_RETURN(const std::string strategy, layer.String());
    absl::StatusOr<partitioner::Strategy> s = partitioner::ParseStrategy(strategy);
    if (!s.ok()) return layer.Error(s.status().message());
    r.strategies[name] = *s;
  }
  return r;
}

template <typename T>
void Compare(const std::string& what, const T& saved, const T& now,
             std::vector<std::string>& lines) {
  if (saved != now) lines.push_back(absl::StrCat(what, ": checkpoint ", saved, ", this run ", now));
}

}  // namespace

RunRecord RecordOf(const partitioner::Plan& plan, costmodel::OptimizerKind optimizer,
                   uint64_t seed) {
  RunRecord r{.model = plan.model_name, .workers = plan.devices, .batch = plan.batch,
              .optimizer = optimizer, .seed = seed,
              .first_bucket_bytes = plan.buckets.first_bytes, .bucket_bytes = plan.buckets.bytes};
  for (const partitioner::LayerPlan& l : plan.layers) {
    r.strategies[l.name] = l.strategy;
    r.output_layouts[l.name] = l.output_layout;
  }
  return r;
}

absl::Status WriteRunRecord(const std::string& dir, const partitioner::Plan& plan,
                            const RunRecord& record) {
  nlohmann::json doc = partitioner::PlanToJson(plan);
  doc["run"] = {{"workers", record.workers},
                {"batch", record.batch},
                {"optimizer", record.optimizer.has_value()
                                  ? std::string(costmodel::OptimizerName(*record.optimizer))
                                  : std::string()},
                {"seed", record.seed.value_or(0)}};
  const std::string text = doc.dump(2) + "\n";
  const std::string path = PlanPath(dir);
  absl::StatusOr<std::string> saved = base::ReadFileText(path, "checkpoint plan", kMaxRecordBytes);
  if (saved.ok() && *saved == text) return absl::OkStatus();
  std::error_code ignored;  // the write names the directory if it cannot be made
  std::filesystem::create_directories(dir, ignored);
  return base::WriteFileAtomically(path, text, "checkpoint plan");
}

absl::StatusOr<std::optional<RunRecord>> ReadRunRecord(const std::string& dir) {
  const bool legacy = !Exists(PlanPath(dir));
  if (legacy && !Exists(LegacyPath(dir))) return std::nullopt;
  absl::StatusOr<RunRecord> r =
      legacy ? ReadLegacyRecord(LegacyPath(dir)) : ReadPlanRecord(PlanPath(dir));
  if (!r.ok()) return AsDataLoss(r.status(), dir);
  return std::optional<RunRecord>(*std::move(r));
}

std::vector<std::string> RunDifferences(const RunRecord& saved, const RunRecord& now) {
  std::vector<std::string> lines;
  Compare("model", saved.model, now.model, lines);
  Compare("workers", saved.workers, now.workers, lines);
  Compare("batch", saved.batch, now.batch, lines);
  if (saved.optimizer.has_value() && now.optimizer.has_value()) {
    Compare("optimizer", std::string(costmodel::OptimizerName(*saved.optimizer)),
            std::string(costmodel::OptimizerName(*now.optimizer)), lines);
  }
  if (saved.seed.has_value() && now.seed.has_value()) {
    Compare("seed", *saved.seed, *now.seed, lines);
  }
  if (saved.bucket_bytes > 0 && now.bucket_bytes > 0) {
    Compare("first-bucket-size", saved.first_bucket_bytes, now.first_bucket_bytes, lines);
    Compare("bucket-size", saved.bucket_bytes, now.bucket_bytes, lines);
  }
  for (const auto& [name, strategy] : saved.strategies) {
    const auto it = now.strategies.find(name);
    const std::string theirs =
        it == now.strategies.end() ? "absent" : std::string(StrategyName(it->second));
    Compare(absl::StrCat("layer ", name), std::string(StrategyName(strategy)), theirs, lines);
    const auto out_saved = saved.output_layouts.find(name);
    const auto out_now = now.output_layouts.find(name);
    if (it != now.strategies.end() && it->second == strategy &&
        out_saved != saved.output_layouts.end() && out_now != now.output_layouts.end()) {
      Compare(absl::StrCat("layer ", name, " output layout"),
              std::string(partitioner::LayoutName(out_saved->second)),
              std::string(partitioner::LayoutName(out_now->second)), lines);
    }
  }
  for (const auto& [name, strategy] : now.strategies) {
    if (saved.strategies.contains(name)) continue;
    Compare(absl::StrCat("layer ", name), std::string("absent"),
            std::string(StrategyName(strategy)), lines);
  }
  return lines;
}

}  // namespace tessera::exec
