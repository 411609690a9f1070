// The NMT job on parallel text (corpus_job.h).
#include "tessera/jobs/nmt/corpus_job.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/batch.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/held_out.h"
#include "tessera/jobs/nmt/corpus_data_source.h"
#include "tessera/jobs/nmt/metrics.h"
#include "tessera/jobs/nmt/nmt_data_source.h"
#include "tessera/jobs/nmt/nmt_eval.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {
namespace {

constexpr int64_t kMaxVocabLines = 2000000;

using Corpora = CorporaOf<ParallelCorpus>;

// The sides of (up to kMaxVocabLines of) the training pairs, evenly spread.
absl::StatusOr<std::pair<std::vector<std::string>, std::vector<std::string>>> VocabularyText(
    const ParallelCorpus& train) {
  std::pair<std::vector<std::string>, std::vector<std::string>> sides;
  const int64_t stride = std::max<int64_t>(1, 2 * train.size() / kMaxVocabLines);
  for (int64_t i = 0; i < train.size(); i += stride) {
    TS_ASSIGN_OR_RETURN(SentencePair p, train.Read(i));
    sides.first.push_back(std::move(p.source));
    sides.second.push_back(std::move(p.target));
  }
  return sides;
}

using Programs = std::vector<std::unique_ptr<exec::TrainingProgram>>;

// The program of the shortest of `lengths` (else the whole length `whole`) that holds `needed`
// tokens, made by `make` when first asked; `made` holds them, lengths.size() + 1 slots (the last:
// the whole length).
absl::StatusOr<ProgramAtLength> ShortestProgram(
    const std::vector<int64_t>& lengths, int64_t whole, int64_t needed, Programs& made,
    const std::function<absl::StatusOr<std::unique_ptr<exec::TrainingProgram>>(int64_t)>& make) {
  const int v = ShortestHolding(lengths, needed);
  const size_t slot = v == exec::DataSource::kWhole ? lengths.size() : static_cast<size_t>(v);
  const int64_t length = v == exec::DataSource::kWhole ? whole : lengths[v];
  if (made[slot] == nullptr) {
    TS_ASSIGN_OR_RETURN(made[slot], make(length));
  }
  return ProgramAtLength{made[slot].get(), length};
}

class CorpusJob : public jobs::TrainingJob {
 public:
  CorpusJob(const CorpusJobOptions& options, Corpora corpora, Vocabularies vocab)
      : options_(options), corpora_(std::move(corpora)), vocab_(std::move(vocab)) {}

  absl::StatusOr<std::unique_ptr<exec::DataSource>> TrainingData(
      const graph::Graph& graph) const override {
    TS_ASSIGN_OR_RETURN(const NmtShape shape, NmtInputShape(graph));
    TS_ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<int64_t>> tokens, TrainingTokens());
    TS_ASSIGN_OR_RETURN(
        std::unique_ptr<CorpusDataSource> data,
        CorpusDataSource::ForGraph(
            graph, corpora_.train, vocab_,
            {.seed = options_.seed,
             .variant_lengths = VariantLengths(shape.length, options_.buckets),
             .token_lengths = std::move(tokens)}));
    return std::unique_ptr<exec::DataSource>(std::move(data));
  }

  bool BuildsModel() const override { return true; }
  absl::StatusOr<graph::Graph> Model(int64_t batch) const override {
    return ModelAt(batch > 0 ? batch : options_.batch, options_.length);
  }
  absl::StatusOr<std::vector<graph::Graph>> ModelVariants(
      const graph::Graph& model) const override {
    TS_ASSIGN_OR_RETURN(const NmtShape shape, NmtInputShape(model));
    std::vector<graph::Graph> out;
    for (int64_t length : VariantLengths(shape.length, options_.buckets)) {
      TS_ASSIGN_OR_RETURN(graph::Graph g, ModelAt(shape.batch, length));
      out.push_back(std::move(g));
    }
    return out;
  }

  absl::StatusOr<jobs::Evaluation> Evaluate(const jobs::TrainedModel& model,
                                            const jobs::EvalOptions& options) const override;

 private:
  graph::zoo::NmtSize Size(int64_t batch, int64_t length) const {
    return {.batch = batch, .vocab = vocab_.source->size(), .length = length,
            .target_vocab = vocab_.target->size(), .dropout = options_.dropout,
            .mask_padding = true};
  }
  absl::StatusOr<graph::Graph> ModelAt(int64_t batch, int64_t length) const {
    return graph::zoo::BuildNmt(Size(batch, length));
  }
  // With the trained parameters: the model at `length` with its logits an output, or (`step`)
  // its decoder step for sources of `length` tokens.
  absl::StatusOr<std::unique_ptr<exec::TrainingProgram>> ProgramAt(
      const jobs::TrainedModel& model, const jobs::EvalOptions& options, int64_t batch,
      int64_t length, bool step) const {
    absl::StatusOr<graph::Graph> g = step ? graph::zoo::BuildNmtDecoderStep(Size(batch, length))
                                          : ModelAt(batch, length);
    if (!g.ok()) return g.status();
    if (!step) TS_RETURN_IF_ERROR(AddLogitsOutput(*g).status());
    return jobs::EvaluationProgram(*g, model, options);
  }

  // The training pairs' TokenLengths, computed by the first call: the command's check and each
  // thread rank's source share one pass over the corpus.
  absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> TrainingTokens() const {
    std::lock_guard<std::mutex> lock(tokens_mu_);
    if (tokens_ == nullptr) {
      TS_ASSIGN_OR_RETURN(tokens_, TokenLengths(*corpora_.train, vocab_));
    }
    return tokens_;
  }

  CorpusJobOptions options_;
  Corpora corpora_;
  Vocabularies vocab_;
  mutable std::mutex tokens_mu_;
  mutable std::shared_ptr<const std::vector<int64_t>> tokens_;
};

absl::StatusOr<jobs::Evaluation> CorpusJob::Evaluate(const jobs::TrainedModel& model,
                                                     const jobs::EvalOptions& options) const {
  graph::Graph g = *model.graph;
  TS_ASSIGN_OR_RETURN(const int64_t classes, AddLogitsOutput(g));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<CorpusDataSource> data,
                      CorpusDataSource::ForGraph(g, corpora_.held_out, vocab_, {.shuffle = false}));
  const int64_t batch = data->batch(), length = data->length();
  // The model at the bucket lengths (the whole one: `g`), made when a pass first fits one:
  // padding is inert in the job's model, so each pass runs on the shortest that holds what it
  // reads (nmt_eval.h); and the decoder step for sources of each length.
  const std::vector<int64_t> lengths = VariantLengths(length, options_.buckets);
  Programs models(lengths.size() + 1), decoders(lengths.size() + 1);
  const ProgramFor at = [&](int64_t needed) {
    return ShortestProgram(lengths, length, needed, models, [&](int64_t l) {
      return l == length ? jobs::EvaluationProgram(g, model, options)
                         : ProgramAt(model, options, batch, l, /*step=*/false);
    });
  };
  const ProgramFor decoder_step = [&](int64_t needed) {
    return ShortestProgram(lengths, length, needed, decoders, [&](int64_t l) {
      return ProgramAt(model, options, batch, l, /*step=*/true);
    });
  };
  // Every held-out pair once: the last batch's rows past the end wrap around to the first
  // pairs (the source is not shuffled); their labels become <pad>, which the loss and the token
  // accuracy skip, and their decodes are not counted.
  const int64_t pairs = corpora_.held_out->size();
  const int64_t steps = std::min(options.batches, (pairs + batch - 1) / batch);
  EvalTotals totals;
  BleuAccumulator bleu;
  jobs::Evaluation e;
  std::string predictions;
  for (int64_t step = 0; step < steps; ++step) {
    exec::Batch inputs;
    TS_RETURN_IF_ERROR(data->Next(step, inputs));
    const int64_t rows_here = std::min(batch, pairs - step * batch);
    std::vector<int64_t>& labels = inputs.Ints("tgt_labels");
    std::fill(labels.begin() + rows_here * length, labels.end(), Vocabulary::kPad);
    TS_ASSIGN_OR_RETURN(
        std::vector<std::vector<int64_t>> rows,
        EvaluateBatch(at, decoder_step, inputs, batch, length, classes, options_.decode, totals));
    const std::vector<int64_t> which = data->Rows(step, 0, rows_here);
    for (int64_t b = 0; b < rows_here; ++b) {
      TS_ASSIGN_OR_RETURN(const SentencePair ref, corpora_.held_out->Read(which[b]));
      const std::string hyp = vocab_.target->Decode(rows[b]);
      bleu.Add(Words13a(hyp), Words13a(ref.target));
      absl::StrAppend(&predictions, ref.source, "\t", hyp, "\n");
      if (static_cast<int64_t>(e.samples.size()) < options.show) {
        e.samples.push_back(absl::StrCat(ref.source, " -> ", hyp,
                                         hyp == ref.target ? "" : "   (reference: ",
                                         hyp == ref.target ? "" : ref.target,
                                         hyp == ref.target ? "" : ")"));
      }
    }
  }
  if (!options.predictions.empty()) {
    TS_RETURN_IF_ERROR(base::WriteFileAtomically(options.predictions, predictions, "predictions"));
    e.files.push_back(options.predictions);
  }
  e.metrics = {{"token_accuracy", totals.accuracy.Value()},
               {"sacrebleu", bleu.Score().Points()},
               {"loss", totals.Loss()},
               {"sentences", static_cast<double>(std::min(pairs, steps * batch))}};
  return e;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TrainingJob>> MakeCorpusJob(const CorpusJobOptions& o) {
  if (o.train.empty()) return absl::InvalidArgumentError("the NMT corpus job needs --train FILE");
  if (o.length < 4 || o.length > 1024 || o.batch < 1 || o.buckets < 1 || o.buckets > o.length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sentence length ", o.length, " must be in [4, 1024], batch ", o.batch,
        " at least 1 and length buckets ", o.buckets, " in [1, the length]"));
  }
  TS_ASSIGN_OR_RETURN(
      Corpora corpora,
      OpenWithHeldOut<ParallelCorpus>({.train = o.train, .valid = o.valid, .test = o.test},
                          "parallel text", "pair"));
  Vocabularies vocab;
  if (!o.vocab.empty()) {
    TS_ASSIGN_OR_RETURN(vocab, Vocabularies::Load(o.vocab));
  } else {
    if (o.vocab_out.empty()) return absl::InvalidArgumentError("no file to write the vocabulary to");
    TS_ASSIGN_OR_RETURN(const auto text, VocabularyText(*corpora.train));
    TS_ASSIGN_OR_RETURN(vocab,
                        Vocabularies::Train(text.first, text.second, o.vocab_size, o.vocab_out));
  }
  return std::unique_ptr<TrainingJob>(new CorpusJob(o, std::move(corpora), std::move(vocab)));
}

}  // namespace tessera::jobs::nmt
