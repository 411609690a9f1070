// Graph files on disk: atomic writes (temporary file, then rename) and reads
// that name the path and the OS reason on failure.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph {
namespace {

// Graph files hold structure and small constants; anything larger is not one
// (and a device such as /dev/zero must not be read forever).
constexpr int64_t kMaxFileBytes = int64_t{1} << 30;

absl::Status OsError(int error_number, absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(error_number, absl::StrCat(what, " '", path, "'"));
}

// Writes all of `text` to `fd`, retrying partial writes and interrupts.
bool WriteAll(int fd, absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A temporary file beside `path`, opened exclusively; its name goes to `temp`.
int CreateTemporary(const std::string& path, std::string& temp) {
  static std::atomic<int> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view text) {
  if (path.empty())
    return absl::InvalidArgumentError("cannot write a graph file: the path is empty");
  std::string temp;
  const int fd = CreateTemporary(path, temp);
  if (fd < 0) return OsError(errno, "cannot create a temporary file beside graph file", path);
  // Write, flush to disk and close; on any failure remove the temporary file.
  const bool written = WriteAll(fd, text) && ::fsync(fd) == 0;
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    const int error_number = written ? errno : write_errno;
    ::unlink(temp.c_str());
    return OsError(error_number, "cannot write graph file", path);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temp.c_str());
    return OsError(error_number, "cannot write graph file", path);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileText(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OsError(errno, "cannot open graph file", path);
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return OsError(EISDIR, "cannot read graph file", path);
  }
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error_number = errno;
      ::close(fd);
      return OsError(error_number, "cannot read graph file", path);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > kMaxFileBytes) {
      ::close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat("graph file '", path, "' is larger than 1 GiB; it is not a graph file"));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

absl::Status WriteGraphFile(const Graph& graph, const std::string& path) {
  return WriteFileAtomically(path, GraphToJson(graph));
}

absl::StatusOr<Graph> ReadGraphFile(const std::string& path) {
  TS_ASSIGN_OR_RETURN(const std::string text, ReadFileText(path));
  return GraphFromJson(text, path);
}

}  // namespace tessera::graph
