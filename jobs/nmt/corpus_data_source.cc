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
                                   int64_t batch, int64_t length, bool masked,
                                   std::shared_ptr<const std::vector<int64_t>> tokens)
    : corpus_(std::move(corpus)),
      vocab_(std::move(vocab)),
      options_(options),
      batch_(batch),
      length_(length),
      masked_(masked),
      tokens_(std::move(tokens)),
      rows_({.examples = corpus_->size(), .batch = batch, .seed = options.seed,
             .group = options.group},
            options.shuffle,
            [this](int64_t i) { return std::min(length_, (*tokens_)[static_cast<size_t>(i)]); }) {}

absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> TokenLengths(
    const ParallelCorpus& corpus, const Vocabularies& vocab) {
  auto out = std::make_shared<std::vector<int64_t>>();
  out->reserve(corpus.size());
  for (int64_t i = 0; i < corpus.size(); ++i) {
    TS_ASSIGN_OR_RETURN(const SentencePair pair, corpus.Read(i));
    const auto source = static_cast<int64_t>(vocab.source->Encode(pair.source).size());
    const auto target = static_cast<int64_t>(vocab.target->Encode(pair.target).size()) + 1;
    out->push_back(std::max(source, target));
  }
  return out;
}

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
  const bool masked = graph.FindTensor("src_lengths").has_value() &&
                      graph.FindTensor("src_mask").has_value();
  for (size_t i = 0; i < options.variant_lengths.size(); ++i) {
    const int64_t l = options.variant_lengths[i];
    if (!masked || l < 2 || l >= shape.length || (i > 0 && l <= options.variant_lengths[i - 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape variants of model '", graph.name(), "' at length ", l, ": variants need the "
          "model with src_lengths and src_mask (graph::zoo::NmtSize::mask_padding) and "
          "ascending lengths in [2, ", shape.length, ")"));
    }
  }
  std::shared_ptr<const std::vector<int64_t>> tokens = options.token_lengths;
  if (options.shuffle && tokens == nullptr) {  // training batches are grouped by these
    TS_ASSIGN_OR_RETURN(tokens, TokenLengths(*corpus, vocab));
  }
  if (tokens != nullptr && static_cast<int64_t>(tokens->size()) != corpus->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token lengths of ", tokens->size(), " pairs for parallel text '", corpus->name(),
        "' of ", corpus->size(), " pairs"));
  }
  return std::unique_ptr<CorpusDataSource>(
      new CorpusDataSource(std::move(corpus), std::move(vocab), options, shape.batch,
                           shape.length, masked, std::move(tokens)));
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
  std::vector<int64_t> source_lengths;  // in the row, cut to the length
  for (int64_t i : Rows(step, first, count)) {
    TS_ASSIGN_OR_RETURN(const SentencePair pair, corpus_->Read(i));
    const std::vector<int64_t> s = vocab_.source->Encode(pair.source);
    const std::vector<int64_t> t = vocab_.target->Encode(pair.target);
    source_lengths.push_back(std::min(length_, static_cast<int64_t>(s.size())));
    Row(s, length_, false, false, /*pad_left=*/!masked_, src);
    Row(t, length_, true, false, false, tgt);
    Row(t, length_, false, true, false, labels);
    ++decoded_;
  }
  batch.Ints("tgt_lengths").assign(static_cast<size_t>(count), length_);
  if (masked_) {
    std::vector<int64_t>& lengths = batch.Ints("src_lengths");
    std::vector<float>& mask = batch.Floats("src_mask");
    lengths.clear(), mask.clear();
    for (int64_t r = 0; r < count; ++r) {
      const int64_t n = source_lengths[static_cast<size_t>(r)];
      lengths.push_back(n);
      // A source without words (none is: the corpus refuses empty sides) attends to all.
      for (int64_t j = 0; j < length_; ++j) mask.push_back(j < n || n == 0 ? 0.f : -1e9f);
    }
  }
  return absl::OkStatus();
}

int CorpusDataSource::Variant(const exec::Batch& rows) const {
  if (!masked_ || !rows.values.contains("src_lengths")) return kWhole;  // FitVariant leaves them
  return ShortestHolding(options_.variant_lengths,
                         std::max(rows.MaxInt("src_lengths"), LongestLabels(rows, length_)));
}

absl::Status CorpusDataSource::FitVariant(int variant, exec::Batch& rows) const {
  if (variant == kWhole) return absl::OkStatus();
  if (!masked_ || variant < 0 || static_cast<size_t>(variant) >= options_.variant_lengths.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NMT corpus: no shape variant ", variant, " (", options_.variant_lengths.size(),
        " variant lengths", masked_ ? "" : ", and the model does not mask its padding", ")"));
  }
  const int64_t keep = options_.variant_lengths[variant];
  std::vector<int64_t>& lengths = rows.Ints("src_lengths");
  std::vector<int64_t>& labels = rows.Ints("tgt_labels");
  if (lengths.empty() || labels.size() != lengths.size() * static_cast<size_t>(length_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NMT corpus: shape variant ", variant, " fits rows of ", length_, " tokens; got ",
        labels.size(), " labels for ", lengths.size(), " rows"));
  }
  if (const int64_t needed = std::max(rows.MaxInt("src_lengths"), LongestLabels(rows, length_));
      needed > keep) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NMT corpus: a row of ", needed, " tokens does not fit shape variant ", variant, " of ",
        keep, " tokens (Variant chose a shorter one than the rows need)"));
  }
  CutToLength(rows, length_, keep);
  return absl::OkStatus();
}

}  // namespace tessera::jobs::nmt
