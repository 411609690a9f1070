// The OCR job's batches from text-line images on disk (line_corpus.h), for the "ocr" model
// sized for them (graph::zoo::BuildOcr).
//
//   TS_ASSIGN_OR_RETURN(auto data, OcrCorpusDataSource::ForGraph(g, corpus, charset, {.seed = 1}));
//   TS_RETURN_IF_ERROR(data->NextRows(step, /*first=*/16, /*count=*/16, batch));  // rows 16..31
//
// The inputs are the synthetic source's (ocr_data_source.h) at the model's sizes: images
// [B,1,32,W] (FitLine: ink 1, paper 0, the line drawn from the left), targets [B,S] (the
// charset's labels, padded with the blank 0; a longer text is cut to S for the loss),
// input_lengths [B] (each line's frames: LineFrames of its drawn width, or the frames CTC needs
// for its labels when more, at most T = W/4), target_lengths [B].
// Training order: jobs::EpochOrder by (seed, epoch), runs of `group` batches sorted by the lines'
// frames (read from the PNG headers once: LineFramesOf), so a batch holds lines of similar
// width; held-out: file order. Each call reads and decodes only the images of the rows asked for
// (decoded() counts them); with `augment`, each training row is augmented from (seed, step, row)
// alone, so the same on any number of workers.
// Shape variants (`variant_frames`, for the model with graph::zoo::OcrSize::mask_padding):
// Variant is the narrowest whose frames hold every row's input_lengths plus
// graph::zoo::kOcrFrameMargin, and FitVariant cuts the images to its width.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/graph/graph.h"
#include "tessera/jobs/epoch_order.h"
#include "tessera/jobs/ocr/line_corpus.h"
#include "tessera/jobs/ocr/line_image.h"

namespace tessera::jobs::ocr {

struct OcrCorpusOptions {
  uint64_t seed = 0;
  bool shuffle = true;   // training order; false: file order (held-out)
  bool augment = false;  // noise, blur, rotation, shear (training only)
  int64_t group = 64;    // batches per width-sorted run (training)
  // The frames (width / 4) of the model's shape variants, ascending, each below the model's and
  // at least its label length; they need the model with OcrSize::mask_padding. Empty: none.
  std::vector<int64_t> variant_frames;
  // The training lines' LineFramesOf when already known (a job shares them between its ranks);
  // null: ForGraph reads them for a training source.
  std::shared_ptr<const std::vector<int64_t>> line_frames;
};

// Per line of `corpus`, LineFrames of its image drawn at `geometry` (from the PNG's header); an
// error names the TSV line of an unreadable image.
absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> LineFramesOf(
    const LineCorpus& corpus, const LineGeometry& geometry);

class OcrCorpusDataSource : public exec::DataSource {
 public:
  // Sizes from `graph`'s images [B,1,32,W] and targets [B,S]; InvalidArgument naming the input
  // when one of the four is missing or another shape, or the model's classes (its log_probs'
  // last axis) are fewer than the charset's size + 1.
  static absl::StatusOr<std::unique_ptr<OcrCorpusDataSource>> ForGraph(
      const graph::Graph& graph, std::shared_ptr<const LineCorpus> corpus,
      std::shared_ptr<const Charset> charset, const OcrCorpusOptions& options);

  absl::Status Next(int64_t step, exec::Batch& batch) override;
  bool HasRows() const override { return true; }
  // InvalidArgument naming the TSV line of an unreadable image or a character outside the set.
  absl::Status NextRows(int64_t step, int64_t first, int64_t count, exec::Batch& batch) override;
  int Variant(const exec::Batch& rows) const override;
  absl::Status FitVariant(int variant, exec::Batch& rows) const override;

  std::vector<int64_t> Rows(int64_t step, int64_t first, int64_t count) const;
  int64_t batch() const { return batch_; }
  int64_t frames() const { return geometry_.width / 4; }
  const LineCorpus& corpus() const { return *corpus_; }
  const Charset& charset() const { return *charset_; }
  int64_t decoded() const { return decoded_.load(); }

 private:
  OcrCorpusDataSource(std::shared_ptr<const LineCorpus> corpus,
                      std::shared_ptr<const Charset> charset, const OcrCorpusOptions& options,
                      int64_t batch, LineGeometry geometry, int64_t max_label, bool masked);

  std::shared_ptr<const LineCorpus> corpus_;
  std::shared_ptr<const Charset> charset_;
  OcrCorpusOptions options_;
  int64_t batch_, max_label_;
  LineGeometry geometry_;
  bool masked_;  // the model's LSTMs read input_lengths: shape variants
  EpochRows rows_;
  std::atomic<int64_t> decoded_{0};
};

}  // namespace tessera::jobs::ocr
