// MiniMalloc's CSV format for buffer lists: a header line naming the columns `id,lower,upper,size`
// (any order; an `offset` column is accepted and ignored on input), then one buffer a row, live on
// [lower, upper). Output writes the same columns with `offset` added.
//
//   TS_ASSIGN_OR_RETURN(std::vector<Buffer> buffers, ReadBufferCsv("A.1048576.csv"));
//   TS_ASSIGN_OR_RETURN(OffsetPlan plan, PlanOffsets(buffers));
//   TS_RETURN_IF_ERROR(WriteBufferCsv("A.out.csv", buffers, plan.offsets));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/memory/buffer.h"

namespace tessera::memory {

// Parses CSV text; `source` (a file name) prefixes every error with the line and the field.
// Only syntax is checked here: ValidateBuffers / PlanOffsets check the values.
absl::StatusOr<std::vector<Buffer>> ParseBufferCsv(absl::string_view text,
                                                   absl::string_view source);
// NotFound naming the path when it cannot be read.
absl::StatusOr<std::vector<Buffer>> ReadBufferCsv(const std::string& path);

// `id,lower,upper,size,offset` rows; offsets are by buffer index (same length as buffers).
std::string FormatBufferCsv(absl::Span<const Buffer> buffers, absl::Span<const int64_t> offsets);
absl::Status WriteBufferCsv(const std::string& path, absl::Span<const Buffer> buffers,
                            absl::Span<const int64_t> offsets);

}  // namespace tessera::memory
