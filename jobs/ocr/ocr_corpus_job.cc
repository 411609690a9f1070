// The OCR job on text-line images (ocr_corpus_job.h).
#include "tessera/jobs/ocr/ocr_corpus_job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/held_out.h"
#include "tessera/jobs/ocr/ctc_decode.h"
#include "tessera/jobs/ocr/ocr_corpus_data_source.h"

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
    TS_ASSIGN_OR_RETURN(std::unique_ptr<OcrCorpusDataSource> data,
                        OcrCorpusDataSource::ForGraph(graph, corpora_.train, charset_,
                                                      {.seed = options_.seed,
                                                       .augment = options_.augment}));
    return std::unique_ptr<exec::DataSource>(std::move(data));
  }

  bool BuildsModel() const override { return true; }
  absl::StatusOr<graph::Graph> Model(int64_t batch) const override {
    return graph::zoo::BuildOcr({.batch = batch > 0 ? batch : options_.batch,
                                 .width = options_.width, .classes = charset_->size() + 1,
                                 .max_label = max_label_});
  }

  absl::StatusOr<jobs::Evaluation> Evaluate(const jobs::TrainedModel& model,
                                            const jobs::EvalOptions& options) const override;

 private:
  OcrCorpusJobOptions options_;
  Corpora corpora_;
  std::shared_ptr<const Charset> charset_;
  int64_t max_label_;
};

absl::StatusOr<jobs::Evaluation> OcrCorpusJob::Evaluate(const jobs::TrainedModel& model,
                                                        const jobs::EvalOptions& options) const {
  graph::Graph g = *model.graph;
  TS_ASSIGN_OR_RETURN(const std::string log_probs, AddLogProbsOutput(g));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<OcrCorpusDataSource> data,
                      OcrCorpusDataSource::ForGraph(g, corpora_.held_out, charset_,
                                                    {.shuffle = false}));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      jobs::EvaluationProgram(g, model, options));
  const int64_t classes = g.tensor(*g.FindTensor(log_probs)).shape.back();
  const int64_t batch = data->batch(), lines = corpora_.held_out->size();
  const int64_t steps = std::min(options.batches, (lines + batch - 1) / batch);
  OcrAccuracy accuracy;
  double loss_sum = 0;
  jobs::Evaluation e;
  std::string predictions;
  for (int64_t step = 0; step < steps; ++step) {
    exec::Batch inputs;
    TS_RETURN_IF_ERROR(data->Next(step, inputs));
    TS_RETURN_IF_ERROR(exec::SetInputs(*program, inputs));
    TS_RETURN_IF_ERROR(program->RunForward());
    loss_sum += program->Loss();
    TS_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> decoded,
                        GreedyCtcLabels(program->Output(log_probs), data->frames(), batch, classes));
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
  if (o.width < 8 || o.width % 4 != 0 || o.width > 8192 || o.batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line width ", o.width, " must be a multiple of 4 in [8, 8192] and batch ", o.batch,
        " at least 1"));
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
