// A strict, JSON-Schema-like check of the plan-file contract (DESIGN.md), shared by
// the plan output tests and the `tessera plan` command tests.
//
//   std::vector<std::string> problems = PlanContractViolations(json, /*layers=*/12, /*devices=*/64);
//   EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::partitioner::testing_contract {

enum class JType { kString, kInt, kNumber, kBool, kObject, kArray };

struct Field {
  std::string key;
  JType type;
  JType element = JType::kObject;  // for arrays
};

inline const char* JTypeName(JType t) {
  switch (t) {
    case JType::kString: return "string";
    case JType::kInt: return "integer";
    case JType::kNumber: return "number";
    case JType::kBool: return "boolean";
    case JType::kObject: return "object";
    case JType::kArray: return "array";
  }
  return "?";
}

inline bool HasType(const nlohmann::json& v, JType t) {
  switch (t) {
    case JType::kString: return v.is_string();
    case JType::kInt: return v.is_number_integer();
    case JType::kNumber: return v.is_number();
    case JType::kBool: return v.is_boolean();
    case JType::kObject: return v.is_object();
    case JType::kArray: return v.is_array();
  }
  return false;
}

// Checks that `object` (at `path`) has every field with its type; arrays' elements too.
inline void CheckFields(const nlohmann::json& object, const std::string& path,
                        const std::vector<Field>& fields, std::vector<std::string>& problems) {
  if (!object.is_object()) {
    problems.push_back(path + ": not an object");
    return;
  }
  for (const Field& f : fields) {
    const std::string at = path + "." + f.key;
    if (!object.contains(f.key)) {
      problems.push_back(at + ": missing");
      continue;
    }
    const nlohmann::json& v = object.at(f.key);
    if (!HasType(v, f.type)) {
      problems.push_back(at + ": not " + std::string(JTypeName(f.type)) + " but " + v.type_name());
      continue;
    }
    if (f.type != JType::kArray) continue;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!HasType(v[i], f.element)) {
        problems.push_back(at + "[" + std::to_string(i) + "]: not " + JTypeName(f.element));
      }
    }
  }
}

inline std::vector<std::string> PlanContractViolations(const nlohmann::json& j, size_t layers,
                                                       int devices) {
  std::vector<std::string> problems;
  CheckFields(j, "plan",
              {{"model", JType::kObject}, {"cluster", JType::kObject},
               {"layers", JType::kArray, JType::kObject}, {"predicted", JType::kObject},
               {"memory", JType::kObject}, {"baselines", JType::kObject}},
              problems);
  if (!problems.empty()) return problems;
  CheckFields(j["model"], "model",
              {{"name", JType::kString}, {"params", JType::kInt}, {"forward_flops", JType::kNumber},
               {"ops", JType::kInt}, {"batch", JType::kInt}},
              problems);
  CheckFields(j["cluster"], "cluster",
              {{"name", JType::kString}, {"devices", JType::kInt}, {"nodes", JType::kInt}},
              problems);
  const nlohmann::json& ls = j["layers"];
  if (ls.size() != layers) {
    problems.push_back("layers: " + std::to_string(ls.size()) + " entries, expected " +
                       std::to_string(layers));
  }
  for (size_t i = 0; i < ls.size(); ++i) {
    CheckFields(ls[i], "layers[" + std::to_string(i) + "]",
                {{"name", JType::kString}, {"op", JType::kString},
                 {"param_names", JType::kArray, JType::kString}, {"params", JType::kInt},
                 {"forward_flops", JType::kNumber}, {"strategy", JType::kString},
                 {"comm_bytes", JType::kInt}, {"compute_s", JType::kNumber},
                 {"comm_s", JType::kNumber}},
                problems);
    if (ls[i].contains("strategy") && ls[i]["strategy"].is_string()) {
      const std::string s = ls[i]["strategy"];
      if (s != "data_parallel" && s != "model_parallel" && s != "late_multiply" &&
          s != "replicated") {
        problems.push_back("layers[" + std::to_string(i) + "].strategy: unknown '" + s + "'");
      }
    }
  }
  CheckFields(j["predicted"], "predicted",
              {{"step_time_s", JType::kNumber}, {"compute_s", JType::kNumber},
               {"comm_s", JType::kNumber}, {"exposed_comm_s", JType::kNumber},
               {"samples_per_s", JType::kNumber}},
              problems);
  CheckFields(j["memory"], "memory",
              {{"device_capacity_bytes", JType::kInt}, {"peak_bytes", JType::kArray, JType::kInt},
               {"fits", JType::kBool}},
              problems);
  if (j["memory"].contains("peak_bytes") && j["memory"]["peak_bytes"].is_array() &&
      j["memory"]["peak_bytes"].size() != static_cast<size_t>(devices)) {
    problems.push_back("memory.peak_bytes: " + std::to_string(j["memory"]["peak_bytes"].size()) +
                       " entries, expected one per device (" + std::to_string(devices) + ")");
  }
  CheckFields(j["baselines"], "baselines",
              {{"data_parallel", JType::kObject}, {"model_parallel", JType::kObject}}, problems);
  for (const char* b : {"data_parallel", "model_parallel"}) {
    if (!j["baselines"].contains(b)) continue;
    CheckFields(j["baselines"][b], std::string("baselines.") + b,
                {{"step_time_s", JType::kNumber}, {"peak_bytes", JType::kInt},
                 {"fits", JType::kBool}},
                problems);
  }
  return problems;
}

}  // namespace tessera::partitioner::testing_contract
