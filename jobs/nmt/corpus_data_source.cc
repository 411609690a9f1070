// NMT batches from parallel text on disk (corpus_data_source.h).
#include "tessera/jobs/nmt/corpus_data_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/epoch_order.h"
#include "tessera/jobs/nmt/nmt_data_source.h"

namespace tessera::jobs::nmt {
namespace {

// Dimension `dim` of the model's 2-d tensor `name` (the classifier's classes, the source
// embedding's rows), or -1 when it has none.
int64_t Dim(const graph::Graph& g, const char* name, int dim) {
  const std::optional<graph::TensorId> t = g.FindTensor(name);
  if (!t.has_value() || g.tensor(*t).shape.size() != 2) return -1;
  return g.tensor(*t).shape[dim];
}

// `ids` cut or padded to `length` ids: <s> first and/or </s> last as asked, padding with <pad>
// on the left or the right.
void Row(const std::vector<int64_t>& ids, int64_t length, bool bos, bool eos, bool pad_left,
         std::vector<int64_t>& out) {
  std::vector<int64_t> row;
  if (bos) row.push_back(SubwordModel::kBos);
  row.insert(row.end(), ids.begin(), ids.end());
  if (eos) row.push_back(SubwordModel::kEos);
  row.resize(std::min<int64_t>(length, static_cast<int64_t>(row.size())));
  const int64_t pad = length - static_cast<int64_t>(row.size());
  if (pad_left) out.insert(out.end(), pad, SubwordModel::kPad);
  out.insert(out.end(), row.begin(), row.end());
  if (!pad_left) out.insert(out.end(), pad, SubwordModel::kPad);
}

}  // namespace

CorpusDataSource::CorpusDataSource(std::shared_ptr<const ParallelCorpus> corpus,
                                   Vocabularies vocab, const CorpusDataOptions& options,
                                   int64_t batch, int64_t length)
    : corpus_(std::move(corpus)),
      vocab_(std::move(vocab)),
      options_(options),
      batch_(batch),
      length_(length),
      rows_({.examples = corpus_->size(), .batch = batch, .seed = options.seed,
             .group = options.group},
            options.shuffle,
            [c = corpus_.get()](int64_t i) { return c->source_bytes(i); }) {}

absl::StatusOr<std::unique_ptr<CorpusDataSource>> CorpusDataSource::ForGraph(
    const graph::Graph& graph, std::shared_ptr<const ParallelCorpus> corpus,
    Vocabularies vocab, const CorpusDataOptions& options) {
  TS_ASSIGN_OR_RETURN(const NmtShape shape, NmtInputShape(graph));
  const int64_t classes = Dim(graph, "classifier", 1);
  if (classes < vocab.target->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", graph.name(), "' predicts ", classes,
        " classes but the target vocabulary has ", vocab.target->size(),
        " pieces; build the model for the vocabulary (graph::zoo::BuildNmt)"));
  }
  const int64_t rows = Dim(graph, "encoder.embedding.weight", 0);
  if (rows >= 0 && rows < vocab.source->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", graph.name(), "' embeds ", rows, " source pieces but the source vocabulary has ",
        vocab.source->size(), "; build the model for the vocabulary (graph::zoo::BuildNmt)"));
  }
  if (options.shuffle && corpus->size() < shape.batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallel text '", corpus->name(), "' holds ", corpus->size(),
        " pairs, fewer than one batch of ", shape.batch, "; use a smaller --batch"));
  }
  return std::unique_ptr<CorpusDataSource>(new CorpusDataSource(
      std::move(corpus), std::move(vocab), options, shape.batch, shape.length));
}

std::vector<int64_t> CorpusDataSource::Rows(int64_t step, int64_t first, int64_t count) const {
  return rows_.Rows(step, first, count);
}

absl::Status CorpusDataSource::Next(int64_t step, exec::Batch& batch) {
  return NextRows(step, 0, batch_, batch);
}

absl::Status CorpusDataSource::NextRows(int64_t step, int64_t first, int64_t count,
                                        exec::Batch& batch) {
  if (step < 0 || first < 0 || count < 1 || first + count > batch_) {
    return absl::InvalidArgumentError(absl::StrCat("NMT corpus step ", step, " rows [", first, ", ",
                                                   first + count, ") outside a batch of ", batch_));
  }
  std::vector<int64_t>& src = batch.Ints("src_tokens");
  std::vector<int64_t>& tgt = batch.Ints("tgt_tokens");
  std::vector<int64_t>& labels = batch.Ints("tgt_labels");
  src.clear(), tgt.clear(), labels.clear();
  for (int64_t i : Rows(step, first, count)) {
    TS_ASSIGN_OR_RETURN(const SentencePair pair, corpus_->Read(i));
    const std::vector<int64_t> s = vocab_.source->Encode(pair.source);
    const std::vector<int64_t> t = vocab_.target->Encode(pair.target);
    Row(s, length_, false, false, /*pad_left=*/true, src);
    Row(t, length_, true, false, false, tgt);
    Row(t, length_, false, true, false, labels);
    ++decoded_;
  }
  batch.Ints("tgt_lengths").assign(static_cast<size_t>(count), length_);
  return absl::OkStatus();
}

}  // namespace tessera::jobs::nmt
