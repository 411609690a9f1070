// Where the `local` cluster lives: LocalClusterPath's environment variables, LoadCluster("local")
// reading the file there, and the error that says to run `tessera calibrate` when it is missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "tessera/costmodel/cluster.h"

namespace tessera::costmodel {
namespace {

namespace fs = std::filesystem;

// Sets (or unsets, with nullopt) an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

fs::path TestDir() {
  const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "cluster_efficiency_local_test";
  fs::create_directories(dir);
  return dir;
}

TEST(LocalClusterTest, PathFollowsTheEnvironment) {
  {
    ScopedEnv a("TESSERA_LOCAL_CLUSTER", "/tmp/x/mine.json");
    ScopedEnv b("XDG_CONFIG_HOME", "/cfg");
    EXPECT_EQ(LocalClusterPath(), "/tmp/x/mine.json");
  }
  {
    ScopedEnv a("TESSERA_LOCAL_CLUSTER", "");  // empty counts as unset
    ScopedEnv b("XDG_CONFIG_HOME", "/cfg");
    EXPECT_EQ(LocalClusterPath(), "/cfg/tessera/local.json");
  }
  {
    ScopedEnv a("TESSERA_LOCAL_CLUSTER", std::nullopt);
    ScopedEnv b("XDG_CONFIG_HOME", std::nullopt);
    ScopedEnv c("HOME", "/home/someone");
    EXPECT_EQ(LocalClusterPath(), "/home/someone/.config/tessera/local.json");
  }
  {
    ScopedEnv a("TESSERA_LOCAL_CLUSTER", std::nullopt);
    ScopedEnv b("XDG_CONFIG_HOME", std::nullopt);
    ScopedEnv c("HOME", std::nullopt);
    EXPECT_EQ(LocalClusterPath(), "");
    absl::StatusOr<ClusterSpec> none = LoadCluster("local");
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
    EXPECT_NE(none.status().message().find("TESSERA_LOCAL_CLUSTER"), std::string::npos)
        << none.status();
  }
}

TEST(LocalClusterTest, LoadsTheCalibratedFile) {
  ClusterSpec c = *ClusterPreset("m40-pcie");
  c.name = "local";
  c.devices_per_node = 2;
  c.nodes = 1;
  Efficiency e;
  e.flops[Efficiency::Index(graph::OpClass::kDense)] = 0.83;
  e.op_overhead_s = 2e-6;
  c.efficiency = e;
  const std::string path = (TestDir() / "local.json").string();
  std::ofstream(path) << ClusterToJson(c);

  ScopedEnv env("TESSERA_LOCAL_CLUSTER", path);
  absl::StatusOr<ClusterSpec> loaded = LoadCluster("local");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, c);
  EXPECT_EQ(loaded->efficiency->flops[0], 0.83);
  // The same file by its path, as --cluster FILE.
  EXPECT_EQ(*LoadCluster(path), c);

  // Through XDG_CONFIG_HOME: <dir>/tessera/local.json.
  fs::create_directories(TestDir() / "xdg" / "tessera");
  fs::copy_file(path, TestDir() / "xdg" / "tessera" / "local.json",
                fs::copy_options::overwrite_existing);
  ScopedEnv unset("TESSERA_LOCAL_CLUSTER", std::nullopt);
  ScopedEnv xdg("XDG_CONFIG_HOME", (TestDir() / "xdg").string());
  loaded = LoadCluster("local");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, c);
}

TEST(LocalClusterTest, MissingFileSaysToRunCalibrate) {
  const std::string path = (TestDir() / "never-written.json").string();
  fs::remove(path);
  ScopedEnv env("TESSERA_LOCAL_CLUSTER", path);
  absl::StatusOr<ClusterSpec> r = LoadCluster("local");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("run `tessera calibrate` first (it writes " + path + ")"),
            std::string::npos)
      << r.status();
}

TEST(LocalClusterTest, BrokenFileNamesThePathAndTheField) {
  const std::string path = (TestDir() / "broken-local.json").string();
  ClusterSpec c = *ClusterPreset("m40-pcie");
  c.efficiency = Efficiency{};
  std::string text = ClusterToJson(c);
  const size_t at = text.find("\"dense\": 0.7");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 12, "\"dense\": 7");
  std::ofstream(path) << text;
  ScopedEnv env("TESSERA_LOCAL_CLUSTER", path);
  absl::StatusOr<ClusterSpec> r = LoadCluster("local");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path + ": efficiency.flops.dense: got 7"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace tessera::costmodel
