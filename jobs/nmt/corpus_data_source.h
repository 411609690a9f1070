// The NMT job's batches from parallel text on disk (parallel_corpus.h), tokenised with subword
// vocabularies (subword_model.h: one shared, or one per side), for the "nmt" model sized for
// them (graph::zoo::BuildNmt).
//
//   TS_ASSIGN_OR_RETURN(auto data, CorpusDataSource::ForGraph(g, corpus, vocab, {.seed = 1}));
//   TS_RETURN_IF_ERROR(data->NextRows(step, /*first=*/16, /*count=*/16, batch));  // rows 16..31
//
// The inputs and their layout are NmtDataSource's (nmt_data_source.h): src_tokens padded on the
// left, tgt_tokens = <s> + target, tgt_labels = target + </s>, each cut to the model's length.
// For a model with NmtSize::mask_padding (inputs src_lengths and src_mask) the source is padded
// on the right instead, src_lengths holds its length and src_mask 0 at its words and -1e9 at its
// padding. Such a source has shape variants (the lengths of `variant_lengths`): Variant is the
// shortest that holds every row's source and target with its <s> or </s>, and FitVariant cuts
// the padding columns beyond it.
// Which pairs make step s is a pure function of (seed, s), so a resumed run continues the same
// sequence:
// - training (shuffle): epoch e = s / steps_per_epoch, ordered by jobs::EpochOrder
//   (epoch_order.h): shuffled by (seed, e), runs of `group` batches sorted by length, batches
//   shuffled; a last partial batch of an epoch is dropped. The length is the pair's tokens
//   (the longer side, its </s> counted, at most the length: TokenLengths, given or computed by
//   ForGraph): then most batches fit a short variant (bytes fit tokens too loosely).
// - held-out (no shuffle): the pairs in file order; step s holds pairs s*batch.. (wrapping
//   around at the end: Rows() says which rows are real).
// Each call reads and encodes only the pairs of the rows asked for (decoded() counts them).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/graph/graph.h"
#include "tessera/jobs/epoch_order.h"
#include "tessera/jobs/length_buckets.h"
#include "tessera/jobs/nmt/parallel_corpus.h"
#include "tessera/jobs/nmt/subword_model.h"

namespace tessera::jobs::nmt {

struct CorpusDataOptions {
  uint64_t seed = 0;
  bool shuffle = true;  // training order; false: file order (held-out)
  int64_t group = 64;   // batches per length-sorted run
  // The sentence lengths of the model's shape variants (exec::DataSource::Variant), ascending,
  // each below the model's; they need the model with NmtSize::mask_padding. Empty: none.
  std::vector<int64_t> variant_lengths;
  // The training pairs' TokenLengths when already known (a job shares them between its ranks);
  // null: ForGraph computes them for a training source.
  std::shared_ptr<const std::vector<int64_t>> token_lengths;
};

// Per pair of `corpus`, the longer of its source and its target with </s>, in tokens: what
// training batches are grouped by. Reads and encodes every pair once.
absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> TokenLengths(
    const ParallelCorpus& corpus, const Vocabularies& vocab);

class CorpusDataSource : public exec::DataSource {
 public:
  // Batch and length from `graph`'s src_tokens [batch, length] (the four inputs of the "nmt"
  // model checked as NmtDataSource::ForGraph does). InvalidArgument when a training corpus holds
  // fewer pairs than one batch, or the graph's vocabularies (its source embedding's rows, its
  // classifier's classes) are smaller than the subword models'.
  static absl::StatusOr<std::unique_ptr<CorpusDataSource>> ForGraph(
      const graph::Graph& graph, std::shared_ptr<const ParallelCorpus> corpus,
      Vocabularies vocab, const CorpusDataOptions& options);

  absl::Status Next(int64_t step, exec::Batch& batch) override;
  bool HasRows() const override { return true; }
  absl::Status NextRows(int64_t step, int64_t first, int64_t count, exec::Batch& batch) override;
  int Variant(const exec::Batch& rows) const override;
  absl::Status FitVariant(int variant, exec::Batch& rows) const override;

  // The corpus indices of step `step`'s rows [first, first + count).
  std::vector<int64_t> Rows(int64_t step, int64_t first, int64_t count) const;
  int64_t steps_per_epoch() const { return rows_.steps_per_epoch(); }
  int64_t batch() const { return batch_; }
  int64_t length() const { return length_; }
  const ParallelCorpus& corpus() const { return *corpus_; }
  const Vocabularies& vocab() const { return vocab_; }
  // Pairs read from disk and encoded so far.
  int64_t decoded() const { return decoded_.load(); }

 private:
  CorpusDataSource(std::shared_ptr<const ParallelCorpus> corpus, Vocabularies vocab,
                   const CorpusDataOptions& options, int64_t batch, int64_t length,
                   bool masked, std::shared_ptr<const std::vector<int64_t>> tokens);

  std::shared_ptr<const ParallelCorpus> corpus_;
  Vocabularies vocab_;
  CorpusDataOptions options_;
  int64_t batch_, length_;
  bool masked_;  // the model has src_lengths and src_mask: right padding, shape variants
  std::shared_ptr<const std::vector<int64_t>> tokens_;  // TokenLengths (held-out: null)
  EpochRows rows_;
  std::atomic<int64_t> decoded_{0};
};

}  // namespace tessera::jobs::nmt
