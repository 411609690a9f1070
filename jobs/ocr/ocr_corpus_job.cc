// The OCR job on text-line images (ocr_corpus_job.h).
#include "tessera/jobs/ocr/ocr_corpus_job.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/held_out.h"
#include "tessera/jobs/length_buckets.h"
#include "tessera/jobs/ocr/ctc_decode.h"
#include "tessera/jobs/ocr/ocr_corpus_data_source.h"
#include "tessera/jobs/ocr/ocr_data_source.h"

namespace tessera::jobs::ocr {
namespace {

using Corpora = CorporaOf<LineCorpus>;

// The longest label of `corpus` under `charset`; an error names a line whose character is not
// in the set.
absl::StatusOr<int64_t> LongestLabel(const LineCorpus& corpus, const Charset& charset) {
  int64_t longest = 1;
  for (int64_t i = 0; i < corpus.size(); ++i) {
    TS_ASSIGN_OR_RETURN(const std::vector<int64_t> labels,
                        charset.Labels(corpus.at(i).text,
                                       absl::StrCat(corpus.name(), ":", corpus.at(i).line)));
    longest = std::max<int64_t>(longest, static_cast<int64_t>(labels.size()));
  }
  return longest;
}

class OcrCorpusJob : public jobs::TrainingJob {
 public:
  OcrCorpusJob(const OcrCorpusJobOptions& options, Corpora corpora,
               std::shared_ptr<const Charset> charset, int64_t max_label)
      : options_(options), corpora_(std::move(corpora)), charset_(std::move(charset)),
        max_label_(max_label) {}

  absl::StatusOr<std::unique_ptr<exec::DataSource>> TrainingData(
      const graph::Graph& graph) const override {
    TS_ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<int64_t>> frames, TrainingFrames());
    TS_ASSIGN_OR_RETURN(std::unique_ptr<OcrCorpusDataSource> data,
                        OcrCorpusDataSource::ForGraph(graph, corpora_.train, charset_,
                                                      {.seed = options_.seed,
                                                       .augment = options_.augment,
                                                       .variant_frames = VariantFrames(),
                                                       .line_frames = std::move(frames)}));
    return std::unique_ptr<exec::DataSource>(std::move(data));
  }

  bool BuildsModel() const override { return true; }
  absl::StatusOr<graph::Graph> Model(int64_t batch) const override {
    return ModelAt(batch > 0 ? batch : options_.batch, options_.width);
  }
  absl::StatusOr<std::vector<graph::Graph>> ModelVariants(
      const graph::Graph& model) const override {
    TS_ASSIGN_OR_RETURN(const OcrShape shape, OcrInputShape(model));
    std::vector<graph::Graph> out;
    for (int64_t frames : VariantFrames()) {
      TS_ASSIGN_OR_RETURN(graph::Graph g, ModelAt(shape.batch, 4 * frames));
      out.push_back(std::move(g));
    }
    return out;
  }

  absl::StatusOr<jobs::Evaluation> Evaluate(const jobs::TrainedModel& model,
                                            const jobs::EvalOptions& options) const override;

 private:
  absl::StatusOr<graph::Graph> ModelAt(int64_t batch, int64_t width) const {
    return graph::zoo::BuildOcr({.batch = batch, .width = width,
                                 .classes = charset_->size() + 1, .max_label = max_label_,
                                 .mask_padding = true});
  }
  // The frames of the model's narrower shapes: `buckets` widths evenly spaced up to --width,
  // those with fewer frames than the longest label left out.
  std::vector<int64_t> VariantFrames() const {
    return VariantLengths(options_.width / 4, options_.buckets, max_label_);
  }
  // The training lines' LineFramesOf, read by the first call: the command's check and each
  // thread rank's source share one pass over the images' headers.
  absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> TrainingFrames() const {
    std::lock_guard<std::mutex> lock(frames_mu_);
    if (frames_ == nullptr) {
      TS_ASSIGN_OR_RETURN(frames_, LineFramesOf(*corpora_.train,
                                                {.height = 32, .width = options_.width}));
    }
    return frames_;
  }

  OcrCorpusJobOptions options_;
  Corpora corpora_;
  std::shared_ptr<const Charset> charset_;
  int64_t max_label_;
  mutable std::mutex frames_mu_;
  mutable std::shared_ptr<const std::vector<int64_t>> frames_;
};

absl::StatusOr<jobs::Evaluation> OcrCorpusJob::Evaluate(const jobs::TrainedModel& model,
                                                        const jobs::EvalOptions& options) const {
  graph::Graph g = *model.graph;
  TS_ASSIGN_OR_RETURN(const std::string log_probs, AddLogProbsOutput(g));
  const std::vector<int64_t> widths = VariantFrames();  // in frames
  TS_ASSIGN_OR_RETURN(std::unique_ptr<OcrCorpusDataSource> data,
                      OcrCorpusDataSource::ForGraph(g, corpora_.held_out, charset_,
                                                    {.shuffle = false, .variant_frames = widths}));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      jobs::EvaluationProgram(g, model, options));
  const int64_t classes = g.tensor(*g.FindTensor(log_probs)).shape.back();
  const int64_t batch = data->batch(), lines = corpora_.held_out->size();
  // The model at the narrower widths, made when a batch first fits one: its padding is inert
  // (batch norm reads the running statistics here), so each batch runs on the narrowest that
  // holds its lines, with the whole width's results.
  std::vector<std::unique_ptr<exec::TrainingProgram>> narrower(widths.size());
  const int64_t steps = std::min(options.batches, (lines + batch - 1) / batch);
  OcrAccuracy accuracy;
  double loss_sum = 0;
  jobs::Evaluation e;
  std::string predictions;
  for (int64_t step = 0; step < steps; ++step) {
    exec::Batch inputs;
    TS_RETURN_IF_ERROR(data->Next(step, inputs));
    const int v = data->Variant(inputs);
    exec::TrainingProgram* run = program.get();
    int64_t frames = data->frames();
    if (v != exec::DataSource::kWhole) {
      if (narrower[v] == nullptr) {
        TS_ASSIGN_OR_RETURN(graph::Graph vg, ModelAt(batch, 4 * widths[v]));
        TS_RETURN_IF_ERROR(AddLogProbsOutput(vg).status());
        TS_ASSIGN_OR_RETURN(narrower[v], jobs::EvaluationProgram(vg, model, options));
      }
      TS_RETURN_IF_ERROR(data->FitVariant(v, inputs));
      run = narrower[v].get();
      frames = widths[v];
    }
    TS_RETURN_IF_ERROR(exec::SetInputs(*run, inputs));
    TS_RETURN_IF_ERROR(run->RunForward());
    loss_sum += run->Loss();
    TS_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> decoded,
                        GreedyCtcLabels(run->Output(log_probs), frames, batch, classes, 0,
                                        inputs.Ints("input_lengths")));
    for (int64_t r = 0; r < batch && step * batch + r < lines; ++r) {  // the wrapped rows: no
      const LineExample& line = corpora_.held_out->at(step * batch + r);
      const std::string text = charset_->Text(decoded[r]);
      accuracy.Add(line.text, text);
      absl::StrAppend(&predictions, line.name, "\t", text, "\n");
      if (static_cast<int64_t>(e.samples.size()) < options.show) {
        e.samples.push_back(absl::StrCat("'", line.text, "' read as '", text, "'",
                                         text == line.text ? "" : "   (wrong)"));
      }
    }
  }
  if (!options.predictions.empty()) {
    TS_RETURN_IF_ERROR(base::WriteFileAtomically(options.predictions, predictions, "predictions"));
    e.files.push_back(options.predictions);
  }
  e.metrics = {{"char_accuracy", accuracy.CharAccuracy()},
               {"line_accuracy", accuracy.LineAccuracy()},
               {"loss", steps > 0 ? loss_sum / static_cast<double>(steps) : 0},
               {"lines", static_cast<double>(accuracy.lines)}};
  return e;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TrainingJob>> MakeOcrCorpusJob(const OcrCorpusJobOptions& o) {
  if (o.train.empty()) return absl::InvalidArgumentError("the OCR corpus job needs --train FILE");
  if (o.width < 8 || o.width % 4 != 0 || o.width > 8192 || o.batch < 1 || o.buckets < 1 ||
      o.buckets > o.width / 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line width ", o.width, " must be a multiple of 4 in [8, 8192], batch ", o.batch,
        " at least 1 and width buckets ", o.buckets, " in [1, the width / 4]"));
  }
  TS_ASSIGN_OR_RETURN(
      Corpora corpora,
      OpenWithHeldOut<LineCorpus>({.train = o.train, .valid = o.valid, .test = o.test},
                          "OCR lines", "line"));
  TS_ASSIGN_OR_RETURN(const Charset charset, o.charset.empty() ? Charset::FromTexts(*corpora.train)
                                                               : Charset::FromFile(o.charset));
  TS_ASSIGN_OR_RETURN(const int64_t longest, LongestLabel(*corpora.train, charset));
  TS_RETURN_IF_ERROR(LongestLabel(*corpora.held_out, charset).status());
  if (2 * longest > o.width / 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR lines '", o.train, "' hold texts of up to ", longest, " characters, but lines ",
        o.width, " pixels wide give ", o.width / 4, " CTC frames; CTC needs about two per "
        "character: pass --width ", 8 * longest, " or more"));
  }
  return std::unique_ptr<TrainingJob>(new OcrCorpusJob(
      o, std::move(corpora), std::make_shared<const Charset>(charset), longest));
}

}  // namespace tessera::jobs::ocr
