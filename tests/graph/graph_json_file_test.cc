// Graph files on disk: atomic writes, reads, and OS errors that name the path.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "graph_test_util.h"
#include "sample_graphs.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph::testing {
namespace {

class GraphFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/graph_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::set<std::string> Entries() const {
    std::set<std::string> names;
    DIR* d = ::opendir(dir_.c_str());
    if (d == nullptr) return names;
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.insert(name);
    }
    ::closedir(d);
    return names;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_;
};

TEST_F(GraphFileTest, WriteThenReadGivesTheSameGraph) {
  const Graph g = SmallNet();
  const std::string path = dir_ + "/net.json";
  ASSERT_TRUE(WriteGraphFile(g, path).ok());
  EXPECT_EQ(Slurp(path), GraphToJson(g));
  auto loaded = ReadGraphFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSameGraph(g, *loaded);
  EXPECT_EQ(Entries(), (std::set<std::string>{"net.json"}));  // no temporary left behind
}

TEST_F(GraphFileTest, OverwriteReplacesTheWholeFile) {
  const std::string path = dir_ + "/g.json";
  ASSERT_TRUE(WriteGraphFile(SmallNet(), path).ok());
  const Graph small = SampleGraph(OpKind::kRelu);
  ASSERT_TRUE(WriteGraphFile(small, path).ok());
  EXPECT_EQ(Slurp(path), GraphToJson(small));
  EXPECT_EQ(Entries(), (std::set<std::string>{"g.json"}));
}

TEST_F(GraphFileTest, MissingFileNamesPathAndReason) {
  const std::string path = dir_ + "/absent.json";
  auto g = ReadGraphFile(path);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasError(g.status(), {path, "No such file or directory"}));
}

TEST_F(GraphFileTest, DirectoryIsAnError) {
  auto g = ReadGraphFile(dir_);
  EXPECT_TRUE(HasError(g.status(), {dir_, "Is a directory"}));
  // Writing onto a directory fails too and leaves nothing behind.
  ASSERT_EQ(::mkdir((dir_ + "/sub").c_str(), 0755), 0);
  EXPECT_TRUE(HasError(WriteGraphFile(SmallNet(), dir_ + "/sub"), {dir_ + "/sub"}));
  EXPECT_EQ(Entries(), (std::set<std::string>{"sub"}));
}

TEST_F(GraphFileTest, WriteIntoMissingFolderNamesPath) {
  const std::string path = dir_ + "/no/such/folder/g.json";
  EXPECT_TRUE(HasError(WriteGraphFile(SmallNet(), path), {path, "No such file or directory"}));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(GraphFileTest, BadContentNamesThePath) {
  const std::string path = dir_ + "/bad.json";
  std::ofstream(path) << R"({"format": "tessera-graph", "version": 1, "name": 3})";
  auto g = ReadGraphFile(path);
  EXPECT_TRUE(HasError(g.status(), {path + ": name: expected a string, got 3"}));
  std::ofstream(path, std::ios::trunc) << "";
  EXPECT_TRUE(HasError(ReadGraphFile(path).status(), {path + ": the file is empty"}));
}

TEST_F(GraphFileTest, EmptyPath) {
  EXPECT_FALSE(WriteGraphFile(SmallNet(), "").ok());
  EXPECT_FALSE(ReadGraphFile("").ok());
}

}  // namespace
}  // namespace tessera::graph::testing
