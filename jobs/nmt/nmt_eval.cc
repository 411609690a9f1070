// Teacher-forced metrics and greedy decodes of one held-out batch (nmt_eval.h).
#include "tessera/jobs/nmt/nmt_eval.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/nmt/greedy_decoder.h"
#include "tessera/jobs/nmt/nmt_data_source.h"

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
  const ProgramFor whole = [&](int64_t) -> absl::StatusOr<ProgramAtLength> {
    return ProgramAtLength{&program, length};
  };
  return EvaluateBatch(whole, inputs, batch, length, classes, totals);
}

namespace {

// The positions a pass over `inputs` reads: each row's source (the whole length when the model
// has no src_lengths: its padding is on the left) and the first `targets` target positions.
int64_t Needed(const exec::Batch& inputs, int64_t targets, int64_t length) {
  if (!inputs.values.contains("src_lengths")) return length;
  return std::max({int64_t{1}, targets, inputs.MaxInt("src_lengths")});
}

// One forward pass of `inputs` (at the whole `length`) on the shortest program that holds its
// sources and its first `targets` target positions; the argmax ids at the whole length (0 past
// the program's).
absl::StatusOr<std::vector<int64_t>> Predict(const ProgramFor& at, const exec::Batch& inputs,
                                             int64_t targets, int64_t batch, int64_t length,
                                             int64_t classes, float* loss) {
  TS_ASSIGN_OR_RETURN(const ProgramAtLength p, at(Needed(inputs, targets, length)));
  const exec::Batch* run = &inputs;
  exec::Batch cut;
  if (p.length < length) {
    cut = inputs;
    CutToLength(cut, length, p.length);
    run = &cut;
  }
  TS_RETURN_IF_ERROR(exec::SetInputs(*p.program, *run));
  TS_RETURN_IF_ERROR(p.program->RunForward());
  if (loss != nullptr) *loss = p.program->Loss();
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                      PredictedIds(p.program->Output(kLogits), batch, p.length, classes));
  if (p.length == length) return ids;
  std::vector<int64_t> whole(static_cast<size_t>(batch * length), 0);
  for (int64_t r = 0; r < batch; ++r) {
    std::copy_n(ids.begin() + r * p.length, p.length, whole.begin() + r * length);
  }
  return whole;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateBatch(const ProgramFor& at,
                                                                const exec::Batch& inputs,
                                                                int64_t batch, int64_t length,
                                                                int64_t classes,
                                                                EvalTotals& totals) {
  const std::vector<int64_t>& labels =
      std::get<std::vector<int64_t>>(inputs.values.at("tgt_labels"));
  const int64_t before = totals.accuracy.total;
  float loss = 0;
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                      Predict(at, inputs, LongestLabels(inputs, length), batch, length,
                              classes, &loss));
  TS_RETURN_IF_ERROR(totals.accuracy.Add(ids, labels));
  totals.loss_sum += loss * static_cast<double>(totals.accuracy.total - before);
  // GreedyDecode's pass t (its t-th call) predicts position t from target positions 0..t.
  int64_t pass = 0;
  PredictFn predict = [&](const exec::Batch& b) -> absl::StatusOr<std::vector<int64_t>> {
    return Predict(at, b, ++pass, batch, length, classes, nullptr);
  };
  return GreedyDecode(inputs, batch, length, predict);
}

}  // namespace tessera::jobs::nmt
