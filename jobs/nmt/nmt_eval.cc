// Teacher-forced metrics and decodes of one held-out batch (nmt_eval.h).
#include "tessera/jobs/nmt/nmt_eval.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
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
                                                                const DecodeOptions& decode,
                                                                EvalTotals& totals) {
  const ProgramFor whole = [&](int64_t) -> absl::StatusOr<ProgramAtLength> {
    return ProgramAtLength{&program, length};
  };
  return EvaluateBatch(whole, inputs, batch, length, classes, decode, totals);
}

namespace {

// The positions a pass over `inputs` reads: each row's source (the whole length when the model
// has no src_lengths: its padding is on the left) and the first `targets` target positions.
int64_t Needed(const exec::Batch& inputs, int64_t targets, int64_t length) {
  if (!inputs.values.contains("src_lengths")) return length;
  return std::max({int64_t{1}, targets, inputs.MaxInt("src_lengths")});
}

// One forward pass of `inputs` (at the whole `length`) on the shortest program that holds its
// sources and its first `targets` target positions; that program, its logits an output.
absl::StatusOr<ProgramAtLength> Run(const ProgramFor& at, const exec::Batch& inputs,
                                    int64_t targets, int64_t length) {
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
  return p;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateBatch(const ProgramFor& at,
                                                                const exec::Batch& inputs,
                                                                int64_t batch, int64_t length,
                                                                int64_t classes,
                                                                const DecodeOptions& decode,
                                                                EvalTotals& totals) {
  const std::vector<int64_t>& labels =
      std::get<std::vector<int64_t>>(inputs.values.at("tgt_labels"));
  const int64_t before = totals.accuracy.total;
  TS_ASSIGN_OR_RETURN(const ProgramAtLength p,
                      Run(at, inputs, LongestLabels(inputs, length), length));
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                      PredictedIds(p.program->Output(kLogits), batch, p.length, classes));
  if (p.length < length) {  // the argmax ids at the whole length, 0 past the program's
    std::vector<int64_t> whole(static_cast<size_t>(batch * length), 0);
    for (int64_t r = 0; r < batch; ++r) {
      std::copy_n(ids.begin() + r * p.length, p.length, whole.begin() + r * length);
    }
    ids = std::move(whole);
  }
  TS_RETURN_IF_ERROR(totals.accuracy.Add(ids, labels));
  totals.loss_sum += p.program->Loss() * static_cast<double>(totals.accuracy.total - before);
  // Decoding pass t reads position t, from target positions 0..t: the logits' rows t * batch
  // .. (t + 1) * batch (time-major).
  const StepLogitsFn logits = [&](const exec::Batch& b,
                                  int64_t t) -> absl::StatusOr<std::vector<float>> {
    TS_ASSIGN_OR_RETURN(const ProgramAtLength q, Run(at, b, t + 1, length));
    const absl::Span<const float> all = q.program->Output(kLogits);
    if (static_cast<int64_t>(all.size()) != q.length * batch * classes || t >= q.length) {
      return absl::InternalError(absl::StrCat("decoding pass ", t, ": logits of ", all.size(),
                                              " values are not [", q.length, " * ", batch, ", ",
                                              classes, "]"));
    }
    return std::vector<float>(all.begin() + t * batch * classes,
                              all.begin() + (t + 1) * batch * classes);
  };
  return Decode(inputs, batch, length, decode, logits);
}

}  // namespace tessera::jobs::nmt
