// The OCR job's batches: synthetic text lines (text_lines.h) fed to the ocr zoo model's four
// data inputs.
//
//   TS_ASSIGN_OR_RETURN(graph::Graph g, graph::zoo::BuildZooModel("ocr", 8));
//   TS_ASSIGN_OR_RETURN(auto data, OcrDataSource::Create(g, {.lines = {.seed = 1}}));
//   exec::Batch batch;
//   TS_RETURN_IF_ERROR(data->Next(/*step=*/0, batch));  // images, targets, *_lengths
//   std::vector<std::string> texts = data->Texts(0);     // the 8 references of step 0
//
// Step s, row b is line s * B + b of the source's split (B the graph's batch), so a step's
// batch depends only on (seed, split, s): resumed runs see the same data. The inputs:
//   images [B,1,32,128] f32   the line's pixels in [0, 1]
//   targets [B,S] i64         LabelOf of each character (1..36), padded with 0 (the blank)
//   input_lengths [B] i64     T, the frames of the CTC loss's log_probs (32)
//   target_lengths [B] i64    the text's length, 1..10
// Evaluation: a source on Split::kHeldOut, steps 0..N-1.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/jobs/ocr/text_lines.h"
#include "tessera/graph/graph.h"

namespace tessera::jobs::ocr {

struct OcrDataOptions {
  TextLineOptions lines;
  Split split = Split::kTrain;
};

// The sizes of `graph`'s four OCR inputs (images [B,1,H,W] f32, targets [B,S] i64,
// input_lengths and target_lengths [B] i64) and T, the frames of its CtcLoss's log_probs (0
// without a CtcLoss); InvalidArgument naming the input that is missing or has another rank,
// dtype or batch. RequireCtcFrames: InvalidArgument when frames is 0.
struct OcrShape {
  int64_t batch = 0, height = 0, width = 0, max_label = 0, frames = 0;
};
absl::StatusOr<OcrShape> OcrInputShape(const graph::Graph& graph);
absl::Status RequireCtcFrames(const graph::Graph& graph, const OcrShape& shape);

class OcrDataSource : public exec::DataSource {
 public:
  // InvalidArgument naming the input when `graph` lacks one of the four inputs or its shape or
  // dtype differs from the list above (S >= 10), or has no CtcLoss reading log_probs [T, B, C].
  static absl::StatusOr<std::unique_ptr<OcrDataSource>> Create(const graph::Graph& graph,
                                                               const OcrDataOptions& options);

  absl::Status Next(int64_t step, exec::Batch& batch) override;

  // The reference texts of step `step`'s rows, and one row's whole line (image, glyph boxes).
  std::vector<std::string> Texts(int64_t step) const;
  TextLine Line(int64_t step, int64_t row) const;

  int64_t batch() const { return batch_; }
  int64_t frames() const { return frames_; }
  int64_t max_label() const { return max_label_; }

 private:
  OcrDataSource(const OcrDataOptions& options, int64_t batch, int64_t frames, int64_t max_label);

  TextLineGenerator lines_;
  Split split_;
  int64_t batch_, frames_, max_label_;
};

}  // namespace tessera::jobs::ocr
