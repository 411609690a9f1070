// Whole-file reads with a size cap and atomic writes (see file_io.h).
#include "tessera/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "absl/strings/str_cat.h"

namespace tessera::base {
namespace {

// "1 GiB", "1 MiB", or bytes.
std::string SizeText(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) {
    return absl::StrCat(bytes >> 30, " GiB");
  }
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) {
    return absl::StrCat(bytes >> 20, " MiB");
  }
  return absl::StrCat(bytes, " bytes");
}

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

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view text,
                                 absl::string_view what) {
  if (path.empty())
    return absl::InvalidArgumentError(absl::StrCat("cannot write a ", what, ": the path is empty"));
  std::string temp;
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
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temp.c_str());
    return OsError(error_number, absl::StrCat("cannot write ", what), path);
  }
  return absl::OkStatus();
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
          absl::StrCat(what, " '", path, "' is larger than ", SizeText(max_bytes),
                       "; it is not a ", what));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace tessera::base
