// Teacher-forced metrics and greedy decodes of one held-out batch (nmt_eval.h).
#include "tessera/jobs/nmt/nmt_eval.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/nmt/greedy_decoder.h"

namespace tessera::jobs::nmt {

absl::StatusOr<int64_t> AddLogitsOutput(graph::Graph& g) {
  const std::optional<graph::TensorId> logits = g.FindTensor(kLogits);
  if (!logits.has_value() || g.tensor(*logits).shape.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", g.name(), "' has no [rows, classes] tensor '", kLogits,
        "' to decode; the NMT job evaluates the zoo's nmt model"));
  }
  const std::vector<graph::TensorId>& outs = g.outputs();
  if (std::find(outs.begin(), outs.end(), *logits) == outs.end()) g.AddOutput(*logits);
  return g.tensor(*logits).shape[1];
}

absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateBatch(exec::TrainingProgram& program,
                                                                const exec::Batch& inputs,
                                                                int64_t batch, int64_t length,
                                                                int64_t classes,
                                                                EvalTotals& totals) {
  TS_RETURN_IF_ERROR(exec::SetInputs(program, inputs));
  TS_RETURN_IF_ERROR(program.RunForward());
  const std::vector<int64_t>& labels =
      std::get<std::vector<int64_t>>(inputs.values.at("tgt_labels"));
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
  return GreedyDecode(inputs, batch, length, predict);
}

}  // namespace tessera::jobs::nmt
