// The NMT job's batches from parallel text on disk (parallel_corpus.h), tokenised with subword
// vocabularies (subword_model.h: one shared, or one per side), for the "nmt" model sized for
// them (graph::zoo::BuildNmt).
//
//   TS_ASSIGN_OR_RETURN(auto data, CorpusDataSource::ForGraph(g, corpus, vocab, {.seed = 1}));
//   TS_RETURN_IF_ERROR(data->NextRows(step, /*first=*/16, /*count=*/16, batch));  // rows 16..31
//
// The inputs and their layout are NmtDataSource's (nmt_data_source.h): src_tokens padded on the
// left, tgt_tokens = <s> + target, tgt_labels = target + </s>, each cut to the model's length.
// Which pairs make step s is a pure function of (seed, s), so a resumed run continues the same
// sequence:
// - training (shuffle): epoch e = s / steps_per_epoch, ordered by jobs::EpochOrder
//   (epoch_order.h) with the source's bytes as the length: shuffled by (seed, e), runs of `group`
//   batches sorted by length, batches shuffled; a last partial batch of an epoch is dropped.
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
#include "tessera/jobs/nmt/parallel_corpus.h"
#include "tessera/jobs/nmt/subword_model.h"

namespace tessera::jobs::nmt {

struct CorpusDataOptions {
  uint64_t seed = 0;
  bool shuffle = true;  // training order; false: file order (held-out)
  int64_t group = 64;   // batches per length-sorted run
};

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
                   const CorpusDataOptions& options, int64_t batch, int64_t length);

  std::shared_ptr<const ParallelCorpus> corpus_;
  Vocabularies vocab_;
  CorpusDataOptions options_;
  int64_t batch_, length_;
  EpochRows rows_;
  std::atomic<int64_t> decoded_{0};
};

}  // namespace tessera::jobs::nmt
