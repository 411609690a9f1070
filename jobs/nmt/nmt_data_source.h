// The NMT example's batches: the number-translation task (number_language.h) tokenized for the
// zoo's "nmt" model (graph/zoo/nmt_small.cc), one exec::DataSource step at a time.
//
//   TS_ASSIGN_OR_RETURN(graph::Graph g, graph::zoo::BuildZooModel("nmt", 32));
//   TS_ASSIGN_OR_RETURN(auto data, NmtDataSource::ForGraph(g, {.seed = 1}));
//   exec::Batch batch;
//   TS_RETURN_IF_ERROR(data->Next(/*step=*/0, batch));
//   TS_RETURN_IF_ERROR(exec::SetInputs(*program, batch));
//
// Step s holds examples s*batch .. s*batch+batch-1 of the split (row b = example s*batch+b),
// so every step is deterministic and held-out steps 0, 1, ... walk a fixed evaluation set.
// The four inputs, [batch, length] row-major (batch-major) except tgt_lengths [batch]:
//   src_tokens   English ids, padded with <pad> (0) on the left by default: the encoder has no
//                sequence lengths, so its final state then follows the last word directly;
//   tgt_tokens   <bos> + German ids, padded on the right (the decoder's input, teacher forcing);
//   tgt_labels   German ids + <eos>, padded on the right with <pad> = 0 (what the decoder must
//                predict at each position: tgt_labels[t] = tgt_tokens[t + 1]);
//   tgt_lengths  `length` for every row (the decoder LSTM runs every position).
// The model's loss must ignore label 0 (LossAttrs::ignore_index = 0) for padding not to count.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/jobs/nmt/number_language.h"
#include "tessera/jobs/nmt/vocabulary.h"
#include "tessera/exec/data_source.h"
#include "tessera/graph/graph.h"

namespace tessera::jobs::nmt {

struct NmtDataOptions {
  uint64_t seed = 0;
  Split split = Split::kTrain;
  int64_t batch = 32;
  int64_t length = 20;            // tokens per row; at least 12 (the longest target + 1)
  bool source_pad_left = true;    // see above
  bool source_reversed = false;   // English words in reverse order (Sutskever et al. 2014)
};

// The batch and length of `graph`'s four NMT inputs (src_tokens, tgt_tokens, tgt_labels
// [batch, length], tgt_lengths [batch], all integers); InvalidArgument naming the input that is
// missing or has another type or shape.
struct NmtShape {
  int64_t batch = 0, length = 0;
};
absl::StatusOr<NmtShape> NmtInputShape(const graph::Graph& graph);

// Keeps the first `keep` of the `length` positions of every row of an NMT batch's sequence
// inputs (src_tokens, tgt_tokens, tgt_labels and, when present, src_mask) and sets tgt_lengths
// to `keep`: the batch of a shorter model, exact when its padding is on the right and inert
// (graph::zoo::NmtSize::mask_padding) and nothing real lies beyond `keep`.
void CutToLength(exec::Batch& batch, int64_t length, int64_t keep);

// What an NMT batch of rows `length` positions long with right-padded targets reads of its
// targets: the longest row of tgt_labels up to its last id that is not <pad>. With the longest
// source (batch.MaxInt("src_lengths")), the positions a shorter model must hold to give the
// batch's loss exactly.
int64_t LongestLabels(const exec::Batch& batch, int64_t length);

class NmtDataSource : public exec::DataSource {
 public:
  // InvalidArgument when batch < 1 or length is too short for the longest sentence.
  static absl::StatusOr<std::unique_ptr<NmtDataSource>> Create(const NmtDataOptions& options);
  // As Create, with batch and length taken from `graph`'s src_tokens [batch, length]; an
  // InvalidArgument naming the input when one of the four inputs is missing, is not an
  // integer tensor, or has another shape.
  static absl::StatusOr<std::unique_ptr<NmtDataSource>> ForGraph(const graph::Graph& graph,
                                                                  NmtDataOptions options);

  absl::Status Next(int64_t step, exec::Batch& batch) override;

  // The examples of step `step`, row by row (the references for BLEU and printing).
  std::vector<Example> Examples(int64_t step) const;
  // Fills the four inputs from `examples` (one row each; options().batch of them).
  absl::Status Fill(absl::Span<const Example> examples, exec::Batch& batch) const;

  const Vocabulary& source_vocabulary() const { return source_vocabulary_; }
  const Vocabulary& target_vocabulary() const { return target_vocabulary_; }
  const NmtDataOptions& options() const { return options_; }

 private:
  NmtDataSource(const NmtDataOptions& options, Vocabulary source, Vocabulary target);

  NmtDataOptions options_;
  Vocabulary source_vocabulary_;
  Vocabulary target_vocabulary_;
};

}  // namespace tessera::jobs::nmt
