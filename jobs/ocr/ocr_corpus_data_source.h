// The OCR job's batches from text-line images on disk (line_corpus.h), for the "ocr" model
// sized for them (graph::zoo::BuildOcr).
//
//   TS_ASSIGN_OR_RETURN(auto data, OcrCorpusDataSource::ForGraph(g, corpus, charset, {.seed = 1}));
//   TS_RETURN_IF_ERROR(data->NextRows(step, /*first=*/16, /*count=*/16, batch));  // rows 16..31
//
// The inputs are the synthetic source's (ocr_data_source.h) at the model's sizes: images
// [B,1,32,W] (FitLine: ink 1, paper 0), targets [B,S] (the charset's labels, padded with the
// blank 0; a longer text is cut to S for the loss), input_lengths [B] = T = W/4, target_lengths
// [B]. Training order: jobs::EpochOrder by (seed, epoch), no length grouping; held-out: file
// order. Each call reads and decodes only the images of the rows asked for (decoded() counts
// them); with `augment`, each training row is augmented from (seed, step, row) alone, so the
// same on any number of workers.
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
};

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

  std::vector<int64_t> Rows(int64_t step, int64_t first, int64_t count) const;
  int64_t batch() const { return batch_; }
  int64_t frames() const { return geometry_.width / 4; }
  const LineCorpus& corpus() const { return *corpus_; }
  const Charset& charset() const { return *charset_; }
  int64_t decoded() const { return decoded_.load(); }

 private:
  OcrCorpusDataSource(std::shared_ptr<const LineCorpus> corpus,
                      std::shared_ptr<const Charset> charset, const OcrCorpusOptions& options,
                      int64_t batch, LineGeometry geometry, int64_t max_label);

  std::shared_ptr<const LineCorpus> corpus_;
  std::shared_ptr<const Charset> charset_;
  OcrCorpusOptions options_;
  int64_t batch_, max_label_;
  LineGeometry geometry_;
  EpochRows rows_;
  std::atomic<int64_t> decoded_{0};
};

}  // namespace tessera::jobs::ocr
