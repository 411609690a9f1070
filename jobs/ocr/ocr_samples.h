// A few decoded lines written beside their text: one PNG per line and an index file.
//
//   std::vector<TextLine> lines = ...;        // e.g. OcrDataSource::Line(step, row)
//   std::vector<std::string> decoded = ...;   // GreedyCtcDecode of the same rows
//   TS_RETURN_IF_ERROR(WriteDecodedSamples("out/samples", lines, decoded));
//
// Writes <dir>/sample_<i>.png (i = 00, 01, ...) and <dir>/samples.tsv with one line per
// sample, "file<TAB>reference<TAB>decoded<TAB>ok|wrong", under a header line. The folder is
// created when missing.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "tessera/jobs/ocr/text_lines.h"

namespace tessera::jobs::ocr {

// InvalidArgument when the counts differ; the I/O error naming the path when a file cannot be
// written.
absl::Status WriteDecodedSamples(const std::string& dir, absl::Span<const TextLine> lines,
                                 absl::Span<const std::string> decoded);

}  // namespace tessera::jobs::ocr
