// The held-out evaluation both NMT jobs share (nmt_job.h on the synthetic task, corpus_job.h on
// parallel text): the loss and token accuracy of the teacher-forced model, then decodes (greedy
// or beam search: beam_decoder.h).
//
//   graph::Graph g = *model.graph;
//   TS_ASSIGN_OR_RETURN(const int64_t classes, AddLogitsOutput(g));  // before the program
//   ... program = jobs::EvaluationProgram(g, model, options) ...
//   EvalTotals totals;
//   TS_ASSIGN_OR_RETURN(auto rows, EvaluateBatch(*program, inputs, batch, length, classes,
//                                                {.beam = 4}, totals));
//   rows[b];   // row b's decoded ids up to its first </s>
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/graph.h"
#include "tessera/jobs/nmt/beam_decoder.h"
#include "tessera/jobs/nmt/metrics.h"

namespace tessera::jobs::nmt {

inline constexpr char kLogits[] = "classifier";

struct EvalTotals {
  double loss_sum = 0;  // the batches' mean losses weighted by their counted labels
  TokenAccuracy accuracy;

  double Loss() const {
    return loss_sum / static_cast<double>(std::max<int64_t>(1, accuracy.total));
  }
};

// Makes the classifier's logits [rows, classes] an output of `g` (and, when it has them, the
// encoder's outputs that step-by-step decoding starts from: graph::zoo::kNmtEncoderOutput, H, C)
// and returns the classes; InvalidArgument naming the model when it has no logits.
absl::StatusOr<int64_t> AddLogitsOutput(graph::Graph& g);

// Runs `inputs` teacher-forced (adding to `totals`), then decodes them; the rows' ids.
absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateBatch(exec::TrainingProgram& program,
                                                                const exec::Batch& inputs,
                                                                int64_t batch, int64_t length,
                                                                int64_t classes,
                                                                const DecodeOptions& decode,
                                                                EvalTotals& totals);

// A program of the model (its logits an output) that holds at least `needed` tokens per
// sentence, and its length (at most the whole model's).
struct ProgramAtLength {
  exec::TrainingProgram* program = nullptr;
  int64_t length = 0;
};
using ProgramFor = std::function<absl::StatusOr<ProgramAtLength>(int64_t needed)>;

// The same for a model whose padding is inert (graph::zoo::NmtSize::mask_padding, inputs
// src_lengths and src_mask): each forward pass runs on the shortest program `at` offers for
// what it reads (teacher forcing: the sources and the labels; decoding pass t: the sources and
// t + 1 target tokens), which gives exactly the whole length's results in less time. `inputs`
// are at the whole `length`.
//
// With `step` (not null: programs of graph::zoo::BuildNmtDecoderStep, with the trained
// parameters, for sources of at least `needed` positions, at the lengths `at` gives), decoding
// runs the encoder once per group of sentences (a pass of `at`'s program) and then one decoder
// step per position, instead of the whole model per position: the same decodes (up to float
// rounding) in a fraction of the time.
absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateBatch(const ProgramFor& at,
                                                                const ProgramFor& step,
                                                                const exec::Batch& inputs,
                                                                int64_t batch, int64_t length,
                                                                int64_t classes,
                                                                const DecodeOptions& decode,
                                                                EvalTotals& totals);

}  // namespace tessera::jobs::nmt
