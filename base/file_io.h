// Whole-file reads with a size cap, and atomic writes, with errors that name the
// path, what the file was meant to be, and the OS reason.
//
//   TS_ASSIGN_OR_RETURN(std::string text, ReadFileText(path, "graph file", 1 << 30));
//   TS_RETURN_IF_ERROR(WriteFileAtomically(path, text, "graph file"));
//   TS_RETURN_IF_ERROR(WriteFilesAtomically({{plan_path, plan}, {trace_path, trace}}, "output"));
//
// A file larger than the cap is refused (a device such as /dev/zero must not be
// read forever); a directory is refused with EISDIR. Writes go to a temporary
// file beside `path`, are flushed to disk and renamed over `path`, so a reader
// sees the old file or the new one, never a partial one. WriteFilesAtomically
// writes every file's temporary first and renames only when all were written, so
// a failed write leaves none of them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::base {

absl::StatusOr<std::string> ReadFileText(const std::string& path, absl::string_view what,
                                         int64_t max_bytes);
absl::Status WriteFileAtomically(const std::string& path, absl::string_view text,
                                 absl::string_view what);
absl::Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files,
                                  absl::string_view what);

}  // namespace tessera::base
