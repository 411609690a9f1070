// Teacher-forced metrics and decodes of one held-out batch (nmt_eval.h).
#include "tessera/jobs/nmt/nmt_eval.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/nmt/nmt_data_source.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {

absl::StatusOr<int64_t> AddLogitsOutput(graph::Graph& g) {
  const std::optional<graph::TensorId> logits = g.FindTensor(kLogits);
  if (!logits.has_value() || g.tensor(*logits).shape.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", g.name(), "' has no [rows, classes] tensor '", kLogits,
        "' to decode; the NMT job evaluates the zoo's nmt model"));
  }
  // The encoder's outputs, which step-by-step decoding starts from, when the model has them.
  for (const char* name : {kLogits, graph::zoo::kNmtEncoderOutput, graph::zoo::kNmtEncoderH,
                           graph::zoo::kNmtEncoderC}) {
    const std::optional<graph::TensorId> t = g.FindTensor(name);
    const std::vector<graph::TensorId>& outs = g.outputs();
    if (t.has_value() && std::find(outs.begin(), outs.end(), *t) == outs.end()) g.AddOutput(*t);
  }
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
  return EvaluateBatch(whole, nullptr, inputs, batch, length, classes, decode, totals);
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

// Decoding one position per pass of the decoder step (graph::zoo::BuildNmtDecoderStep): pass 0
// runs the whole model once on the sources (the shortest program that holds them) for the
// encoder's outputs and final state; every pass then gathers the rows' states by `parents`, feeds
// each row's token at position t and keeps the state after it.
class StepDecoder {
 public:
  StepDecoder(const ProgramFor& at, const ProgramFor& step, int64_t batch, int64_t length,
              int64_t classes)
      : at_(at), step_for_(step), batch_(batch), length_(length), classes_(classes) {}

  absl::StatusOr<std::vector<float>> Logits(const exec::Batch& b, int64_t t,
                                            absl::Span<const int64_t> parents) {
    if (t == 0) TS_RETURN_IF_ERROR(Start(b));
    if (static_cast<int64_t>(parents.size()) != batch_) {
      return absl::InternalError(absl::StrCat("decoding pass ", t, ": ", parents.size(),
                                              " parents for ", batch_, " rows"));
    }
    const auto& tokens = std::get<std::vector<int64_t>>(b.values.at("tgt_tokens"));
    std::vector<int64_t>& token = inputs_.Ints("tgt_tokens");
    std::vector<float>& h = inputs_.Floats(graph::zoo::kNmtStepH0);
    std::vector<float>& c = inputs_.Floats(graph::zoo::kNmtStepC0);
    const size_t width = h_.size() / static_cast<size_t>(batch_);
    for (int64_t r = 0; r < batch_; ++r) {
      if (parents[r] < 0 || parents[r] >= batch_) {
        return absl::InternalError(absl::StrCat("decoding pass ", t, ": row ", r,
                                                " extends row ", parents[r], " of ", batch_));
      }
      token[r] = tokens[r * length_ + t];
      const size_t from = static_cast<size_t>(parents[r]) * width;
      std::copy_n(h_.begin() + from, width, h.begin() + r * width);
      std::copy_n(c_.begin() + from, width, c.begin() + r * width);
    }
    exec::TrainingProgram& program = *step_.program;
    TS_RETURN_IF_ERROR(exec::SetInputs(program, inputs_));
    TS_RETURN_IF_ERROR(program.RunForward());
    const absl::Span<const float> logits = program.Output(kLogits);
    const absl::Span<const float> h_n = program.Output(graph::zoo::kNmtStepHn);
    const absl::Span<const float> c_n = program.Output(graph::zoo::kNmtStepCn);
    if (static_cast<int64_t>(logits.size()) != batch_ * classes_ || h_n.size() != h_.size() ||
        c_n.size() != c_.size()) {
      return absl::InternalError(absl::StrCat(
          "decoding pass ", t, ": the decoder step gave ", logits.size(), " logits and states of ",
          h_n.size(), " and ", c_n.size(), " values for ", batch_, " rows of ", classes_,
          " classes and ", width, " units"));
    }
    h_.assign(h_n.begin(), h_n.end());
    c_.assign(c_n.begin(), c_n.end());
    return std::vector<float>(logits.begin(), logits.end());
  }

 private:
  absl::Status Start(const exec::Batch& b) {
    TS_ASSIGN_OR_RETURN(const ProgramAtLength p, Run(at_, b, 1, length_));
    const absl::Span<const float> enc = p.program->Output(graph::zoo::kNmtEncoderOutput);
    const absl::Span<const float> h = p.program->Output(graph::zoo::kNmtEncoderH);
    const absl::Span<const float> c = p.program->Output(graph::zoo::kNmtEncoderC);
    if (enc.empty() || h.empty() || h.size() != c.size() ||
        enc.size() != h.size() * static_cast<size_t>(p.length)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "decoding step by step needs the model's outputs '", graph::zoo::kNmtEncoderOutput,
          "' [length, rows, units], '", graph::zoo::kNmtEncoderH, "' and '",
          graph::zoo::kNmtEncoderC, "' [1, rows, units] (AddLogitsOutput adds them)"));
    }
    TS_ASSIGN_OR_RETURN(step_, step_for_(p.length));
    if (step_.length != p.length) {
      return absl::InternalError(absl::StrCat("the decoder step holds ", step_.length,
                                              " source positions, the encoder gave ", p.length));
    }
    h_.assign(h.begin(), h.end());
    c_.assign(c.begin(), c.end());
    inputs_.values.clear();
    if (auto mask = b.values.find("src_mask"); mask != b.values.end()) {
      inputs_.values.insert(*mask);
      CutToLength(inputs_, length_, p.length);
    }
    inputs_.Floats(graph::zoo::kNmtStepEncoder).assign(enc.begin(), enc.end());
    inputs_.Floats(graph::zoo::kNmtStepH0).resize(h_.size());
    inputs_.Floats(graph::zoo::kNmtStepC0).resize(c_.size());
    inputs_.Ints("tgt_tokens").resize(static_cast<size_t>(batch_));
    inputs_.Ints("tgt_labels").assign(static_cast<size_t>(batch_), Vocabulary::kPad);
    inputs_.Ints("tgt_lengths").assign(static_cast<size_t>(batch_), 1);
    return absl::OkStatus();
  }

  const ProgramFor& at_;
  const ProgramFor& step_for_;
  const int64_t batch_, length_, classes_;
  ProgramAtLength step_;
  exec::Batch inputs_;      // the step's inputs
  std::vector<float> h_, c_;  // each row's state after the last pass, [1, rows, units]
};

}  // namespace

absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateBatch(const ProgramFor& at,
                                                                const ProgramFor& step,
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
  if (step) {
    StepDecoder decoder(at, step, batch, length, classes);
    const StepLogitsFn logits = [&](const exec::Batch& b, int64_t t,
                                    absl::Span<const int64_t> parents) {
      return decoder.Logits(b, t, parents);
    };
    return Decode(inputs, batch, length, decode, logits);
  }
  const StepLogitsFn logits = [&](const exec::Batch& b, int64_t t,
                                  absl::Span<const int64_t>) -> absl::StatusOr<std::vector<float>> {
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
