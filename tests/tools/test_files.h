// Files the command tests write and read back: a fresh path in the test's temporary folder,
// and a JSON file parsed.
//
//   const std::string report = TempPath("report.json");   // removed if a run left it
//   ... RunCommand(RunTrain, {..., "--report-json", report}) ...
//   const nlohmann::json j = ReadJson(report);
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::tools {

inline std::string TempPath(const std::string& name) {
  const std::filesystem::path p = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove(p);
  return p.string();
}

inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

}  // namespace tessera::tools
