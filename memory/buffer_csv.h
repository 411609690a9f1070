// MiniMalloc's CSV format for buffer lists: a header line naming the columns `id,lower,upper,size`
// (any order; an `offset` column is accepted and ignored on input), then one buffer a row, live on
// [lower, upper). Output writes the same columns with `offset` added.
//
//   TS_ASSIGN_OR_RETURN(BufferTable table, ReadBufferCsv("A.1048576.csv"));
//   TS_ASSIGN_OR_RETURN(OffsetPlan plan, PlanOffsets(table.buffers));
//   TS_RETURN_IF_ERROR(WriteBufferCsv("A.out.csv", table.buffers, plan.offsets, table.ids));
//
// Ids are text, as in MiniMalloc ("b12", "x", "7"): a row's id is written back exactly as it was
// read, and the planner sees the buffers numbered by row (buffers[i].id == i). Fields follow
// RFC 4180 quoting: an id with a comma, a quote or surrounding spaces is enclosed in double
// quotes, a quote inside doubled ("a ""b"", c"); unquoted fields lose surrounding spaces. An id
// cannot span lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/memory/buffer.h"

namespace tessera::memory {

// The rows of a buffer list.
struct BufferTable {
  std::vector<Buffer> buffers;   // buffers[i].id == i, the row's index
  std::vector<std::string> ids;  // ids[i]: row i's id as the file spells it
};

// Parses CSV text; `source` (a file name) prefixes every error with the line, and the field or
// the buffer's id. Refused: a malformed field or quote, an empty or repeated id, a size <= 0,
// upper <= lower (ValidateBuffers' rules, so PlanOffsets accepts what this returns).
absl::StatusOr<BufferTable> ParseBufferCsv(absl::string_view text, absl::string_view source);
// NotFound naming the path when it cannot be read.
absl::StatusOr<BufferTable> ReadBufferCsv(const std::string& path);

// `id,lower,upper,size,offset` rows; offsets are by buffer index (same length as buffers). `ids`
// (one per buffer, quoted where needed) names the rows; empty: each buffer's numeric id.
std::string FormatBufferCsv(absl::Span<const Buffer> buffers, absl::Span<const int64_t> offsets,
                            absl::Span<const std::string> ids = {});
absl::Status WriteBufferCsv(const std::string& path, absl::Span<const Buffer> buffers,
                            absl::Span<const int64_t> offsets,
                            absl::Span<const std::string> ids = {});

}  // namespace tessera::memory
