// The OCR training job (ocr_job.h).
#include "tessera/jobs/ocr/ocr_job.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/ocr/ctc_decode.h"
#include "tessera/jobs/ocr/ocr_data_source.h"
#include "tessera/jobs/ocr/ocr_samples.h"

namespace tessera::jobs::ocr {
namespace {

class OcrJob : public jobs::TrainingJob {
 public:
  explicit OcrJob(const OcrJobOptions& options) : options_(options) {}

  absl::StatusOr<std::unique_ptr<exec::DataSource>> TrainingData(
      const graph::Graph& graph) const override {
    TS_ASSIGN_OR_RETURN(std::unique_ptr<OcrDataSource> data,
                        OcrDataSource::Create(graph, {.lines = {.seed = options_.seed}}));
    return std::unique_ptr<exec::DataSource>(std::move(data));
  }

  absl::StatusOr<jobs::Evaluation> Evaluate(const jobs::TrainedModel& model,
                                            const jobs::EvalOptions& options) const override;

 private:
  OcrJobOptions options_;
};

// The first `show` lines of held-out step 0 with what the model read, as text and (with a
// directory) as PNG files.
absl::Status AddSamples(const OcrDataSource& data, const std::vector<std::string>& decoded,
                        const jobs::EvalOptions& options, jobs::Evaluation& e) {
  const int64_t show = std::min<int64_t>(options.show, static_cast<int64_t>(decoded.size()));
  std::vector<TextLine> lines;
  for (int64_t row = 0; row < show; ++row) {
    lines.push_back(data.Line(0, row));
    const bool right = lines.back().text == decoded[row];
    e.samples.push_back(absl::StrCat("'", lines.back().text, "' read as '", decoded[row], "'",
                                     right ? "" : "   (wrong)"));
  }
  if (options.samples_dir.empty() || show == 0) return absl::OkStatus();
  const std::vector<std::string> shown(decoded.begin(), decoded.begin() + show);
  TS_RETURN_IF_ERROR(WriteDecodedSamples(options.samples_dir, lines, shown));
  for (const auto& entry : std::filesystem::directory_iterator(options.samples_dir)) {
    e.files.push_back(entry.path().string());
  }
  std::sort(e.files.begin(), e.files.end());
  return absl::OkStatus();
}

absl::StatusOr<jobs::Evaluation> OcrJob::Evaluate(const jobs::TrainedModel& model,
                                                  const jobs::EvalOptions& options) const {
  graph::Graph g = *model.graph;
  TS_ASSIGN_OR_RETURN(const std::string log_probs, AddLogProbsOutput(g));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<OcrDataSource> data,
                      OcrDataSource::Create(g, {.lines = {.seed = options_.seed},
                                                .split = Split::kHeldOut}));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      jobs::EvaluationProgram(g, model, options));
  const int64_t classes = g.tensor(*g.FindTensor(log_probs)).shape.back();
  OcrAccuracy accuracy;
  double loss_sum = 0;
  jobs::Evaluation e;
  for (int64_t step = 0; step < options.batches; ++step) {
    exec::Batch inputs;
    TS_RETURN_IF_ERROR(data->Next(step, inputs));
    TS_RETURN_IF_ERROR(exec::SetInputs(*program, inputs));
    TS_RETURN_IF_ERROR(program->RunForward());
    loss_sum += program->Loss();
    TS_ASSIGN_OR_RETURN(std::vector<std::string> decoded,
                        GreedyCtcDecode(program->Output(log_probs), data->frames(),
                                        data->batch(), classes));
    const std::vector<std::string> references = data->Texts(step);
    for (size_t i = 0; i < decoded.size(); ++i) accuracy.Add(references[i], decoded[i]);
    if (step == 0) TS_RETURN_IF_ERROR(AddSamples(*data, decoded, options, e));
  }
  e.metrics = {{"char_accuracy", accuracy.CharAccuracy()},
               {"line_accuracy", accuracy.LineAccuracy()},
               {"loss", options.batches > 0 ? loss_sum / static_cast<double>(options.batches) : 0}};
  return e;
}

}  // namespace

std::unique_ptr<jobs::TrainingJob> MakeOcrJob(const OcrJobOptions& options) {
  return std::make_unique<OcrJob>(options);
}

}  // namespace tessera::jobs::ocr
