// OCR batches from text-line images on disk (ocr_corpus_data_source.h).
#include "tessera/jobs/ocr/ocr_corpus_data_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/hash.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/epoch_order.h"
#include "tessera/jobs/ocr/ocr_data_source.h"
#include "tessera/jobs/ocr/png_reader.h"

namespace tessera::jobs::ocr {
namespace {

// The classes of the model's log_probs (the last axis of the CtcLoss's first input), or -1.
int64_t Classes(const graph::Graph& g) {
  for (const graph::Node& n : g.nodes()) {
    if (n.kind != graph::OpKind::kCtcLoss || n.inputs.empty()) continue;
    const graph::Shape& s = g.tensor(n.inputs[0]).shape;
    if (!s.empty()) return s.back();
  }
  return -1;
}

}  // namespace

OcrCorpusDataSource::OcrCorpusDataSource(std::shared_ptr<const LineCorpus> corpus,
                                         std::shared_ptr<const Charset> charset,
                                         const OcrCorpusOptions& options, int64_t batch,
                                         LineGeometry geometry, int64_t max_label)
    : corpus_(std::move(corpus)),
      charset_(std::move(charset)),
      options_(options),
      batch_(batch),
      max_label_(max_label),
      geometry_(geometry),
      rows_({.examples = corpus_->size(), .batch = batch, .seed = options.seed},
            options.shuffle) {}

absl::StatusOr<std::unique_ptr<OcrCorpusDataSource>> OcrCorpusDataSource::ForGraph(
    const graph::Graph& graph, std::shared_ptr<const LineCorpus> corpus,
    std::shared_ptr<const Charset> charset, const OcrCorpusOptions& options) {
  TS_ASSIGN_OR_RETURN(const OcrShape shape, OcrInputShape(graph));
  TS_RETURN_IF_ERROR(RequireCtcFrames(graph, shape));
  if (shape.frames * 4 != shape.width || Classes(graph) < charset->size() + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR corpus: model '", graph.name(), "' has ", shape.frames, " frames for images ",
        shape.width, " wide and ", Classes(graph), " classes; the corpus needs width / 4 frames "
        "and ", charset->size() + 1, " classes (its characters and the blank): build the model "
        "with graph::zoo::BuildOcr"));
  }
  return std::unique_ptr<OcrCorpusDataSource>(new OcrCorpusDataSource(
      std::move(corpus), std::move(charset), options, shape.batch,
      {.height = shape.height, .width = shape.width}, shape.max_label));
}

std::vector<int64_t> OcrCorpusDataSource::Rows(int64_t step, int64_t first, int64_t count) const {
  return rows_.Rows(step, first, count);
}

absl::Status OcrCorpusDataSource::Next(int64_t step, exec::Batch& batch) {
  return NextRows(step, 0, batch_, batch);
}

absl::Status OcrCorpusDataSource::NextRows(int64_t step, int64_t first, int64_t count,
                                           exec::Batch& batch) {
  if (step < 0 || first < 0 || count < 1 || first + count > batch_) {
    return absl::InvalidArgumentError(absl::StrCat("OCR corpus step ", step, " rows [", first,
                                                   ", ", first + count, ") outside a batch of ",
                                                   batch_));
  }
  std::vector<float>& images = batch.Floats("images");
  std::vector<int64_t>& targets = batch.Ints("targets");
  std::vector<int64_t>& target_lengths = batch.Ints("target_lengths");
  images.clear(), targets.clear(), target_lengths.clear();
  const std::vector<int64_t> rows = Rows(step, first, count);
  for (size_t k = 0; k < rows.size(); ++k) {
    const LineExample& e = corpus_->at(rows[k]);
    const std::string where = absl::StrCat(corpus_->name(), ":", e.line);
    absl::StatusOr<GreyImage> png = ReadPng(e.image);
    if (!png.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", png.status().message()));
    std::vector<float> pixels = FitLine(*png, geometry_);
    if (options_.augment && options_.shuffle) {
      const uint64_t key = base::Mix64(options_.seed ^ base::Mix64(step * batch_ + first + k));
      AugmentLine(pixels, geometry_, key);
    }
    images.insert(images.end(), pixels.begin(), pixels.end());
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> labels, charset_->Labels(e.text, where));
    labels.resize(std::min<size_t>(labels.size(), max_label_));
    target_lengths.push_back(static_cast<int64_t>(labels.size()));
    labels.resize(max_label_, 0);
    targets.insert(targets.end(), labels.begin(), labels.end());
    ++decoded_;
  }
  batch.Ints("input_lengths").assign(static_cast<size_t>(count), frames());
  return absl::OkStatus();
}

}  // namespace tessera::jobs::ocr
