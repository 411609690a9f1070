// OCR batches from text-line images on disk (ocr_corpus_data_source.h).
#include "tessera/jobs/ocr/ocr_corpus_data_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/hash.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/epoch_order.h"
#include "tessera/jobs/length_buckets.h"
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

// True when every LSTM of `g` (at least one) reads the input input_lengths as its sequence_lens
// (graph::zoo::OcrSize::mask_padding).
bool LstmsReadInputLengths(const graph::Graph& g) {
  const std::optional<graph::TensorId> lengths = g.FindTensor("input_lengths");
  int lstms = 0;
  for (const graph::Node& n : g.nodes()) {
    if (n.kind != graph::OpKind::kLstm) continue;
    if (!lengths.has_value() || n.inputs.size() < 5 || n.inputs[4] != *lengths) return false;
    ++lstms;
  }
  return lstms > 0;
}

// The frames CTC needs for `labels`: one per label and one more between two equal ones.
int64_t CtcFrames(const std::vector<int64_t>& labels) {
  int64_t frames = static_cast<int64_t>(labels.size());
  for (size_t i = 1; i < labels.size(); ++i) frames += labels[i] == labels[i - 1];
  return frames;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> LineFramesOf(
    const LineCorpus& corpus, const LineGeometry& geometry) {
  auto out = std::make_shared<std::vector<int64_t>>();
  out->reserve(corpus.size());
  for (int64_t i = 0; i < corpus.size(); ++i) {
    const LineExample& e = corpus.at(i);
    absl::StatusOr<GreyImage> size = ReadPngSize(e.image);
    if (!size.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(corpus.name(), ":", e.line, ": ", size.status().message()));
    }
    out->push_back(LineFrames(DrawnWidth(*size, geometry), geometry));
  }
  return out;
}

OcrCorpusDataSource::OcrCorpusDataSource(std::shared_ptr<const LineCorpus> corpus,
                                         std::shared_ptr<const Charset> charset,
                                         const OcrCorpusOptions& options, int64_t batch,
                                         LineGeometry geometry, int64_t max_label, bool masked)
    : corpus_(std::move(corpus)),
      charset_(std::move(charset)),
      options_(options),
      batch_(batch),
      max_label_(max_label),
      geometry_(geometry),
      masked_(masked),
      rows_({.examples = corpus_->size(), .batch = batch, .seed = options.seed,
             .group = options.group},
            options.shuffle,
            options_.line_frames == nullptr
                ? std::function<int64_t(int64_t)>()
                : [frames = options_.line_frames](int64_t i) {
                    return (*frames)[static_cast<size_t>(i)];
                  }) {}

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
  const bool masked = LstmsReadInputLengths(graph);
  for (size_t i = 0; i < options.variant_frames.size(); ++i) {
    const int64_t f = options.variant_frames[i];
    if (!masked || f < shape.max_label || f >= shape.frames ||
        (i > 0 && f <= options.variant_frames[i - 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape variants of model '", graph.name(), "' at ", f, " frames: variants need the "
          "model whose LSTMs read input_lengths (graph::zoo::OcrSize::mask_padding) and "
          "ascending frames in [", shape.max_label, " (the labels), ", shape.frames, ")"));
    }
  }
  const LineGeometry geometry{.height = shape.height, .width = shape.width};
  OcrCorpusOptions o = options;
  if (o.shuffle && o.line_frames == nullptr) {  // training batches are grouped by these
    TS_ASSIGN_OR_RETURN(o.line_frames, LineFramesOf(*corpus, geometry));
  }
  if (o.line_frames != nullptr && static_cast<int64_t>(o.line_frames->size()) != corpus->size()) {
    return absl::InvalidArgumentError(absl::StrCat("line frames of ", o.line_frames->size(),
                                                   " lines for OCR lines '", corpus->name(),
                                                   "' of ", corpus->size(), " lines"));
  }
  return std::unique_ptr<OcrCorpusDataSource>(
      new OcrCorpusDataSource(std::move(corpus), std::move(charset), o, shape.batch, geometry,
                              shape.max_label, masked));
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
  std::vector<int64_t>& input_lengths = batch.Ints("input_lengths");
  images.clear(), targets.clear(), target_lengths.clear(), input_lengths.clear();
  const std::vector<int64_t> rows = Rows(step, first, count);
  for (size_t k = 0; k < rows.size(); ++k) {
    const LineExample& e = corpus_->at(rows[k]);
    const std::string where = absl::StrCat(corpus_->name(), ":", e.line);
    absl::StatusOr<GreyImage> png = ReadPng(e.image);
    if (!png.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", png.status().message()));
    std::vector<float> pixels = FitLine(*png, geometry_);
    const int64_t drawn = DrawnWidth(*png, geometry_);
    if (options_.augment && options_.shuffle) {
      const uint64_t key = base::Mix64(options_.seed ^ base::Mix64(step * batch_ + first + k));
      AugmentLine(pixels, geometry_, drawn, key);
    }
    images.insert(images.end(), pixels.begin(), pixels.end());
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> labels, charset_->Labels(e.text, where));
    labels.resize(std::min<size_t>(labels.size(), max_label_));
    target_lengths.push_back(static_cast<int64_t>(labels.size()));
    input_lengths.push_back(
        std::min(frames(), std::max(LineFrames(drawn, geometry_), CtcFrames(labels))));
    labels.resize(max_label_, 0);
    targets.insert(targets.end(), labels.begin(), labels.end());
    ++decoded_;
  }
  return absl::OkStatus();
}

int OcrCorpusDataSource::Variant(const exec::Batch& rows) const {
  if (!masked_ || !rows.values.contains("input_lengths")) return kWhole;
  return ShortestHolding(options_.variant_frames,
                         rows.MaxInt("input_lengths") + graph::zoo::kOcrFrameMargin);
}

absl::Status OcrCorpusDataSource::FitVariant(int variant, exec::Batch& rows) const {
  if (variant == kWhole) return absl::OkStatus();
  if (!masked_ || variant < 0 || static_cast<size_t>(variant) >= options_.variant_frames.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR corpus: no shape variant ", variant, " (", options_.variant_frames.size(),
        " variant widths", masked_ ? "" : ", and the model does not mask its padding", ")"));
  }
  const int64_t keep = 4 * options_.variant_frames[variant], width = geometry_.width;
  std::vector<float>& images = rows.Floats("images");
  const size_t n = rows.Ints("input_lengths").size();
  if (n == 0 || images.size() != n * static_cast<size_t>(geometry_.height * width)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR corpus: shape variant ", variant, " fits rows of images ", width, " wide; got ",
        images.size(), " pixels for ", n, " rows"));
  }
  if (const int64_t needed = rows.MaxInt("input_lengths") + graph::zoo::kOcrFrameMargin;
      needed > keep / 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR corpus: a line of ", needed, " frames with its margin does not fit shape variant ",
        variant, " of ", keep / 4, " frames (Variant chose a narrower one than the rows need)"));
  }
  // Each image row [width] keeps its first `keep` pixels, in place.
  const size_t image_rows = n * static_cast<size_t>(geometry_.height);
  for (size_t r = 0; r < image_rows; ++r) {
    std::copy_n(images.begin() + r * width, keep, images.begin() + r * keep);
  }
  images.resize(image_rows * keep);
  return absl::OkStatus();
}

}  // namespace tessera::jobs::ocr
