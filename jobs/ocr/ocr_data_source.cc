#include "tessera/jobs/ocr/ocr_data_source.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"

namespace tessera::jobs::ocr {
namespace {

using graph::DType;
using graph::Graph;
using graph::Shape;

std::string ShapeText(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ","), "]"); }

// The data input `name` with `rank` dimensions and `dtype`; InvalidArgument naming it otherwise.
absl::StatusOr<Shape> InputShape(const Graph& g, absl::string_view name, size_t rank,
                                 DType dtype) {
  for (graph::TensorId t : g.TensorsWithRole(graph::TensorRole::kInput)) {
    const graph::Tensor& x = g.tensor(t);
    if (x.name != name) continue;
    if (x.shape.size() != rank || x.dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "OCR data: input '", name, "' of graph '", g.name(), "' has shape ", ShapeText(x.shape),
          " and the wrong rank or dtype; the OCR data source fills the ocr zoo model's inputs "
          "(images [B,1,32,128] f32, targets [B,10] i64, input_lengths/target_lengths [B] i64)"));
    }
    return x.shape;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "OCR data: graph '", g.name(), "' has no data input '", name,
      "'; build the ocr zoo model (graph::zoo::BuildZooModel(\"ocr\", batch))"));
}

// T, the frames of the log_probs the first CtcLoss reads.
std::optional<int64_t> CtcFrames(const Graph& g) {
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    const graph::Node& n = g.node(id);
    if (n.kind != graph::OpKind::kCtcLoss || n.inputs.empty()) continue;
    const Shape& s = g.tensor(n.inputs[0]).shape;
    if (s.size() == 3 && s[0] > 0) return s[0];
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<OcrShape> OcrInputShape(const graph::Graph& graph) {
  TS_ASSIGN_OR_RETURN(Shape images, InputShape(graph, "images", 4, DType::kF32));
  TS_ASSIGN_OR_RETURN(Shape targets, InputShape(graph, "targets", 2, DType::kI64));
  TS_ASSIGN_OR_RETURN(Shape input_lengths, InputShape(graph, "input_lengths", 1, DType::kI64));
  TS_ASSIGN_OR_RETURN(Shape target_lengths, InputShape(graph, "target_lengths", 1, DType::kI64));
  const int64_t b = images[0];
  if (b < 1 || images[1] != 1 || targets[0] != b || input_lengths[0] != b ||
      target_lengths[0] != b) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR data: graph '", graph.name(), "' has images ", ShapeText(images), ", targets ",
        ShapeText(targets), ", input_lengths ", ShapeText(input_lengths), ", target_lengths ",
        ShapeText(target_lengths), "; expected images [B,1,H,W], targets [B,S] and lengths [B], "
        "B >= 1"));
  }
  return OcrShape{.batch = b, .height = images[2], .width = images[3], .max_label = targets[1],
                  .frames = CtcFrames(graph).value_or(0)};
}

absl::Status RequireCtcFrames(const graph::Graph& graph, const OcrShape& shape) {
  if (shape.frames > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "OCR data: graph '", graph.name(),
      "' has no CtcLoss reading log_probs [T, B, C]; the input lengths are its T"));
}

absl::StatusOr<std::unique_ptr<OcrDataSource>> OcrDataSource::Create(
    const graph::Graph& graph, const OcrDataOptions& options) {
  TS_ASSIGN_OR_RETURN(const OcrShape shape, OcrInputShape(graph));
  if (shape.height != kLineHeight || shape.width != kLineWidth ||
      shape.max_label < kMaxTextLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR data: graph '", graph.name(), "' reads images [", shape.batch, ",1,", shape.height,
        ",", shape.width, "] and labels of ", shape.max_label, "; the synthetic lines are ",
        kLineHeight, "x",
        kLineWidth, " with labels of up to ", kMaxTextLength, " (build the ocr zoo model)"));
  }
  TS_RETURN_IF_ERROR(RequireCtcFrames(graph, shape));
  return std::unique_ptr<OcrDataSource>(
      new OcrDataSource(options, shape.batch, shape.frames, shape.max_label));
}

OcrDataSource::OcrDataSource(const OcrDataOptions& options, int64_t batch, int64_t frames,
                             int64_t max_label)
    : lines_(options.lines),
      split_(options.split),
      batch_(batch),
      frames_(frames),
      max_label_(max_label) {}

absl::Status OcrDataSource::Next(int64_t step, exec::Batch& batch) {
  if (step < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("OCR data: step ", step, " is negative; steps count from 0"));
  }
  const size_t pixels = static_cast<size_t>(kLineHeight) * kLineWidth;
  std::vector<float>& images = batch.Floats("images");
  std::vector<int64_t>& targets = batch.Ints("targets");
  std::vector<int64_t>& input_lengths = batch.Ints("input_lengths");
  std::vector<int64_t>& target_lengths = batch.Ints("target_lengths");
  images.resize(batch_ * pixels);
  targets.assign(batch_ * max_label_, kBlank);
  input_lengths.assign(batch_, frames_);
  target_lengths.resize(batch_);
  for (int64_t b = 0; b < batch_; ++b) {
    const TextLine line = Line(step, b);
    std::copy(line.pixels.begin(), line.pixels.end(), images.begin() + b * pixels);
    for (size_t i = 0; i < line.text.size(); ++i) {
      targets[b * max_label_ + i] = LabelOf(line.text[i]);
    }
    target_lengths[b] = static_cast<int64_t>(line.text.size());
  }
  return absl::OkStatus();
}

std::vector<std::string> OcrDataSource::Texts(int64_t step) const {
  std::vector<std::string> texts;
  for (int64_t b = 0; b < batch_; ++b) texts.push_back(lines_.Text(split_, step * batch_ + b));
  return texts;
}

TextLine OcrDataSource::Line(int64_t step, int64_t row) const {
  return lines_.Line(split_, step * batch_ + row);
}

}  // namespace tessera::jobs::ocr
