// The NMT training job (nmt_job.h).
#include "tessera/jobs/nmt/nmt_job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/nmt/greedy_decoder.h"
#include "tessera/jobs/nmt/metrics.h"
#include "tessera/jobs/nmt/nmt_data_source.h"

namespace tessera::jobs::nmt {
namespace {

constexpr char kLogits[] = "classifier";

// What one held-out pass adds up.
struct Totals {
  double loss_sum = 0;  // the batches' mean losses weighted by their counted labels
  TokenAccuracy accuracy;
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
  TS_RETURN_IF_ERROR(exec::SetInputs(program, inputs));
  TS_RETURN_IF_ERROR(program.RunForward());
  const std::vector<int64_t>& labels = inputs.Ints("tgt_labels");
  const int64_t before = totals.accuracy.total;
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                      PredictedIds(program.Output(kLogits), batch, length, classes));
  TS_RETURN_IF_ERROR(totals.accuracy.Add(ids, labels));
  totals.loss_sum += program.Loss() * static_cast<double>(totals.accuracy.total - before);

  PredictFn predict = [&](const exec::Batch& b) -> absl::StatusOr<std::vector<int64_t>> {
    TS_RETURN_IF_ERROR(exec::SetInputs(program, b));
    TS_RETURN_IF_ERROR(program.RunForward());
    return PredictedIds(program.Output(kLogits), batch, length, classes);
  };
  TS_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> rows,
                      GreedyDecode(inputs, batch, length, predict));
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
  const std::optional<graph::TensorId> logits = g.FindTensor(kLogits);
  if (!logits.has_value() || g.tensor(*logits).shape.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", g.name(), "' has no [rows, classes] tensor '", kLogits,
        "' to decode; the NMT job evaluates the zoo's nmt model"));
  }
  const int64_t classes = g.tensor(*logits).shape[1];
  const std::vector<graph::TensorId>& outs = g.outputs();
  if (std::find(outs.begin(), outs.end(), *logits) == outs.end()) g.AddOutput(*logits);
  TS_ASSIGN_OR_RETURN(std::unique_ptr<NmtDataSource> data,
                      NmtDataSource::ForGraph(g, {.seed = options_.seed, .split = Split::kHeldOut}));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      jobs::EvaluationProgram(g, model, options));
  Totals totals;
  for (int64_t step = 0; step < options.batches; ++step) {
    TS_RETURN_IF_ERROR(EvaluateStep(step, *data, *program, classes, options.show, totals));
  }
  jobs::Evaluation e;
  const double counted = static_cast<double>(std::max<int64_t>(1, totals.accuracy.total));
  e.metrics = {{"token_accuracy", totals.accuracy.Value()},
               {"bleu", totals.bleu.Score().bleu},
               {"loss", totals.loss_sum / counted}};
  e.samples = std::move(totals.samples);
  return e;
}

}  // namespace

std::unique_ptr<jobs::TrainingJob> MakeNmtJob(const NmtJobOptions& options) {
  return std::make_unique<NmtJob>(options);
}

}  // namespace tessera::jobs::nmt
