// Greedy and beam-search decoding over a model that gives position t's logits per pass: the
// zoo's "nmt" decoder is causal (its output at position t reads tgt_tokens[0..t] only), so the
// teacher-forced graph run forward once per position, each time fed the tokens chosen so far,
// decodes; a one-step decoder that keeps each row's state (graph::zoo::BuildNmtDecoderStep, as
// the corpus job decodes: nmt_eval.h) gives the same logits in far less time, gathering its
// states by the `parents` each pass names. Beam 1 is greedy decoding; beam K keeps each
// sentence's K best hypotheses.
//
//   StepLogitsFn logits = [&](const exec::Batch& b, int64_t t,
//                             absl::Span<const int64_t>) -> absl::StatusOr<std::vector<float>> {
//     TS_RETURN_IF_ERROR(exec::SetInputs(*program, b));
//     TS_RETURN_IF_ERROR(program->RunForward());
//     ... return the classifier's rows t * batch .. t * batch + batch - 1 ([batch, classes]) ...
//   };
//   TS_ASSIGN_OR_RETURN(auto rows, Decode(batch_inputs, batch, length, {.beam = 4}, logits));
//   std::string text = vocab.Decode(rows[0]);
//
// Pass t (the t-th call, from 0) reads position t's logits of every row; the chosen ids become
// tgt_tokens[t + 1] of the next pass. A hypothesis ends at its first <eos> (kept in its ids) or
// after `length` ids.
//
// Beam search (K >= 2) runs the model's `batch` rows as hypotheses: the sentences go in groups
// of batch / K, each sentence's live hypotheses in K adjacent rows (its data inputs repeated),
// so a batch of sentences takes about K times the passes of greedy decoding. At each pass every
// live hypothesis is extended by its most likely next ids; ranked by summed log-probability,
// the best K that do not end in <eos> stay live, and those ending in <eos> among the best K are
// finished (fairseq's rule). A sentence is done with K finished hypotheses, or when no live one
// can still beat its best finished one (its score / lp(length) is a bound); its result is
// the finished hypothesis of the highest score / lp(n) for its n ids (the <eos> counted),
// lp(n) = ((5 + n) / 6)^alpha (Wu et al. 2016, GNMT; alpha 0 ranks by summed log-probability,
// which favours short outputs).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/exec/data_source.h"

namespace tessera::jobs::nmt {

// Position t's logits [batch, classes] (row-major, one row per batch row) for the inputs of
// `batch`, whose tgt_tokens hold each row's ids up to position t (then <pad>). Row r's ids up to
// position t - 1 are those row parents[r] held at pass t - 1 (pass 0: parents[r] is r), so a
// model that keeps a state per row (a step-by-step decoder) gathers its rows by `parents` and
// reads only position t; a model that reads the whole tgt_tokens may ignore them.
using StepLogitsFn = std::function<absl::StatusOr<std::vector<float>>(
    const exec::Batch&, int64_t t, absl::Span<const int64_t> parents)>;

struct DecodeOptions {
  int64_t beam = 1;             // hypotheses kept per sentence; 1: greedy
  double length_penalty = 0.6;  // alpha of lp(n) above; beam >= 2 only
  // n >= 1: no hypothesis holds an n-gram of ids twice (the id that would repeat one is never
  // chosen; fairseq's --no-repeat-ngram-size); 0: repeats allowed.
  int64_t no_repeat_ngram = 0;
};

// Each row's ids, up to and including its first <eos> (or `length` ids). `inputs` holds the
// model's data inputs, batch-major (e.g. from a DataSource); its tgt_tokens are replaced.
// InvalidArgument when tgt_tokens is missing or not batch * length integers, when an input is
// not a whole number of rows, when the options are out of range (beam in [1, batch], alpha in
// [0, 10], no_repeat_ngram at least 0) or when `logits` returns other than a multiple of
// `batch` values; `logits`'s own errors are passed on.
absl::StatusOr<std::vector<std::vector<int64_t>>> Decode(const exec::Batch& inputs, int64_t batch,
                                                         int64_t length,
                                                         const DecodeOptions& options,
                                                         const StepLogitsFn& logits);

}  // namespace tessera::jobs::nmt
