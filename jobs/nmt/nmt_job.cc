// The NMT training job (nmt_job.h).
#include "tessera/jobs/nmt/nmt_job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/nmt/metrics.h"
#include "tessera/jobs/nmt/nmt_data_source.h"
#include "tessera/jobs/nmt/nmt_eval.h"

namespace tessera::jobs::nmt {
namespace {

// What one held-out pass adds up.
struct Totals {
  EvalTotals eval;
  BleuAccumulator bleu;
  std::vector<std::string> samples;
};

class NmtJob : public jobs::TrainingJob {
 public:
  explicit NmtJob(const NmtJobOptions& options) : options_(options) {}

  absl::StatusOr<std::unique_ptr<exec::DataSource>> TrainingData(
      const graph::Graph& graph) const override {
    TS_ASSIGN_OR_RETURN(std::unique_ptr<NmtDataSource> data,
                        NmtDataSource::ForGraph(graph, {.seed = options_.seed}));
    return std::unique_ptr<exec::DataSource>(std::move(data));
  }

  absl::StatusOr<jobs::Evaluation> Evaluate(const jobs::TrainedModel& model,
                                            const jobs::EvalOptions& options) const override;

 private:
  absl::Status EvaluateStep(int64_t step, NmtDataSource& data,
                            exec::TrainingProgram& program, int64_t classes, int64_t show,
                            Totals& totals) const;

  NmtJobOptions options_;
};

absl::Status NmtJob::EvaluateStep(int64_t step, NmtDataSource& data,
                                  exec::TrainingProgram& program, int64_t classes, int64_t show,
                                  Totals& totals) const {
  const int64_t batch = data.options().batch, length = data.options().length;
  exec::Batch inputs;
  TS_RETURN_IF_ERROR(data.Next(step, inputs));
  TS_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> rows,
                      EvaluateBatch(program, inputs, batch, length, classes, {}, totals.eval));
  const std::vector<Example> examples = data.Examples(step);
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<std::string> words = data.target_vocabulary().Decode(rows[b]);
    totals.bleu.Add(words, examples[b].target);
    if (static_cast<int64_t>(totals.samples.size()) < show) {
      totals.samples.push_back(absl::StrCat(
          examples[b].number, ": ", absl::StrJoin(examples[b].source, " "), " -> ",
          absl::StrJoin(words, " "), words == examples[b].target ? "" : "   (reference: ",
          words == examples[b].target ? "" : absl::StrJoin(examples[b].target, " "),
          words == examples[b].target ? "" : ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<jobs::Evaluation> NmtJob::Evaluate(const jobs::TrainedModel& model,
                                                  const jobs::EvalOptions& options) const {
  graph::Graph g = *model.graph;
  TS_ASSIGN_OR_RETURN(const int64_t classes, AddLogitsOutput(g));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<NmtDataSource> data,
                      NmtDataSource::ForGraph(g, {.seed = options_.seed, .split = Split::kHeldOut}));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      jobs::EvaluationProgram(g, model, options));
  Totals totals;
  for (int64_t step = 0; step < options.batches; ++step) {
    TS_RETURN_IF_ERROR(EvaluateStep(step, *data, *program, classes, options.show, totals));
  }
  jobs::Evaluation e;
  e.metrics = {{"token_accuracy", totals.eval.accuracy.Value()},
               {"bleu", totals.bleu.Score().bleu},
               {"loss", totals.eval.Loss()}};
  e.samples = std::move(totals.samples);
  return e;
}

}  // namespace

std::unique_ptr<jobs::TrainingJob> MakeNmtJob(const NmtJobOptions& options) {
  return std::make_unique<NmtJob>(options);
}

}  // namespace tessera::jobs::nmt
