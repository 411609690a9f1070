#include "tessera/base/file_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera::base {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  const fs::path p = fs::path(testing::TempDir()) / ("file_io_" + name);
  fs::remove(p);
  return p.string();
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every entry of `dir` whose name starts with `prefix` (targets and temporaries).
int CountStartingWith(const std::string& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

TEST(FileIoTest, AtomicWriteReplacesExistingFileWhole) {
  const std::string a = TempPath("a.txt");
  std::ofstream(a) << "old contents that are longer";
  ASSERT_TRUE(WriteFileAtomically(a, "new", "test file").ok());
  EXPECT_EQ(Read(a), "new");
  EXPECT_EQ(CountStartingWith(testing::TempDir(), "file_io_a.txt"), 1);  // no temporary left
}

TEST(FileIoTest, WriteFilesAtomicallyWritesAllOrNone) {
  const std::string a = TempPath("both_a.txt"), b = TempPath("both_b.txt");
  ASSERT_TRUE(WriteFilesAtomically({{a, "A"}, {b, "B"}}, "test file").ok());
  EXPECT_EQ(Read(a), "A");
  EXPECT_EQ(Read(b), "B");

  const std::string c = TempPath("none_c.txt");
  absl::Status s = WriteFilesAtomically({{c, "C"}, {"/nonexistent-dir/d.txt", "D"}}, "test file");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/d.txt"), std::string::npos) << s.message();
  EXPECT_EQ(CountStartingWith(testing::TempDir(), "file_io_none_c.txt"), 0);
}

TEST(FileIoTest, ReadNamesThePathAndRefusesLargeFilesAndDirectories) {
  const std::string a = TempPath("read.txt");
  std::ofstream(a) << "0123456789";
  EXPECT_EQ(*ReadFileText(a, "test file", 10), "0123456789");
  absl::StatusOr<std::string> big = ReadFileText(a, "test file", 9);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("is larger than 9 bytes; it is not a test file"),
            std::string::npos)
      << big.status();
  absl::StatusOr<std::string> dir = ReadFileText(testing::TempDir(), "test file", 10);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("cannot read test file"), std::string::npos);
  absl::StatusOr<std::string> missing = ReadFileText("/nonexistent-dir/x", "test file", 10);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera::base
