// Whole-file reads with a size cap and atomic writes (see file_io.h).
#include "tessera/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/text_format.h"

namespace tessera::base {
namespace {

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

// Writes `text` to a new temporary file beside `path`, flushed to disk; its name
// goes to `temp`. On failure nothing is left behind.
absl::Status WriteTemporary(const std::string& path, absl::string_view text,
                            absl::string_view what, std::string& temp) {
  if (path.empty())
    return absl::InvalidArgumentError(absl::StrCat("cannot write a ", what, ": the path is empty"));
  const int fd = CreateTemporary(path, temp);
  if (fd < 0) return OsError(errno, absl::StrCat("cannot create a temporary file beside ", what), path);
  // Write, flush to disk and close; on any failure remove the temporary file.
  const bool written = WriteAll(fd, text) && ::fsync(fd) == 0;
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    const int error_number = written ? errno : write_errno;
    ::unlink(temp.c_str());
    return OsError(error_number, absl::StrCat("cannot write ", what), path);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files,
                                  absl::string_view what) {
  std::vector<std::string> temps;
  const auto remove_temps = [&temps](size_t from) {
    for (size_t i = from; i < temps.size(); ++i) ::unlink(temps[i].c_str());
  };
  // Step 1: every file to its temporary; the first failure removes them all.
  for (const auto& [path, text] : files) {
    std::string temp;
    absl::Status written = WriteTemporary(path, text, what, temp);
    if (!written.ok()) {
      remove_temps(0);
      return written;
    }
    temps.push_back(std::move(temp));
  }
  // Step 2: rename them into place.
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      const int error_number = errno;
      remove_temps(i);
      return OsError(error_number, absl::StrCat("cannot write ", what), files[i].first);
    }
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view text,
                                 absl::string_view what) {
  return WriteFilesAtomically({{path, std::string(text)}}, what);
}

absl::StatusOr<std::string> ReadFileText(const std::string& path, absl::string_view what,
                                         int64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OsError(errno, absl::StrCat("cannot open ", what), path);
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return OsError(EISDIR, absl::StrCat("cannot read ", what), path);
  }
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error_number = errno;
      ::close(fd);
      return OsError(error_number, absl::StrCat("cannot read ", what), path);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes) {
      ::close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", path, "' is larger than ", HumanBytesExact(max_bytes),
                       "; it is not a ", what));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace tessera::base
