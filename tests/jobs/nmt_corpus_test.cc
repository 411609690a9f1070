// NMT on parallel text: the corpus reader (jobs/nmt/parallel_corpus.h), the SentencePiece
// vocabulary (subword_model.h), the row-wise data source (corpus_data_source.h) and the job
// (corpus_job.h), on small files written here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/nmt/corpus_data_source.h"
#include "tessera/jobs/nmt/corpus_job.h"
#include "tessera/jobs/nmt/nmt_eval.h"
#include "tessera/jobs/nmt/parallel_corpus.h"
#include "tessera/jobs/nmt/subword_model.h"

namespace tessera::jobs::nmt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;

using Params = std::map<std::string, std::vector<float>>;

// Every parameter of `g` uniform in [-0.5, 0.5) from `seed`: random weights decode varied ids.
Params RandomParams(const graph::Graph& g, uint32_t seed) {
  Params params;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  for (const graph::Tensor& t : g.tensors()) {
    if (t.role != graph::TensorRole::kParameter) continue;
    for (int64_t i = 0; i < graph::NumElements(t.shape); ++i) params[t.name].push_back(uniform(rng));
  }
  return params;
}

class NmtCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("tessera_nmt_corpus_", ::testing::UnitTest::GetInstance()->random_seed(),
                        "_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // `n` pairs "the cat number i sat." -> "el gato numero i se sento." of varying length.
  std::string Corpus(const std::string& name, int n) {
    static const char* kWords[] = {"red", "green", "blue", "small", "old", "happy", "tall"};
    std::string text;
    for (int i = 0; i < n; ++i) {
      std::string en = "the", es = "el";
      for (int k = 0; k <= i % 5; ++k) {
        en += std::string(" ") + kWords[(i + k) % 7];
        es += std::string(" ") + kWords[(i + 3 * k) % 7] + "o";
      }
      absl::StrAppend(&text, en, " cat ", i, " sat.\t", es, " gato ", i, " se sento.\n");
    }
    return Write(name, text);
  }

  fs::path dir_;
};

TEST_F(NmtCorpusTest, ReadsATsvAndTwoFilesPairByPair) {
  auto tsv = ParallelCorpus::Open(Write("a.tsv", "Hello.\tHola.\r\n\nGood night!\tBuenas noches.\n"));
  ASSERT_TRUE(tsv.ok()) << tsv.status();
  ASSERT_EQ(tsv->size(), 2);
  auto second = tsv->Read(1);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->source, "Good night!");
  EXPECT_EQ(second->target, "Buenas noches.");
  EXPECT_EQ(tsv->Read(0)->target, "Hola.");
  const std::string en = Write("a.en", "one\ntwo\n"), es = Write("a.es", "uno\ndos");
  auto two = ParallelCorpus::Open(en + "," + es);
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->size(), 2);
  EXPECT_EQ(two->Read(1)->source, "two");
  EXPECT_EQ(two->Read(1)->target, "dos");
  const ParallelCorpus sub = two->Subset({1}, "part");
  EXPECT_EQ(sub.size(), 1);
  EXPECT_EQ(sub.Read(0)->target, "dos");
}

TEST_F(NmtCorpusTest, BadLinesAreErrorsNamingTheFileAndLine) {
  const auto error = [&](const std::string& spec) {
    absl::StatusOr<ParallelCorpus> c = ParallelCorpus::Open(spec);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << spec;
    return std::string(c.status().message());
  };
  const std::string no_tab = Write("no_tab.tsv", "a\tb\n\nno tab here\n");
  EXPECT_THAT(error(no_tab), HasSubstr(no_tab + ":3: want one tab"));
  const std::string empty = Write("empty.tsv", "a\tb\nc\t\n");
  EXPECT_THAT(error(empty), HasSubstr(empty + ":2: empty target"));
  const std::string latin1 = Write("latin1.tsv", "ni\xf1o\tchild\n");
  EXPECT_THAT(error(latin1), HasSubstr(latin1 + ":1: the text is not UTF-8"));
  const std::string en = Write("b.en", "one\ntwo\nthree\n"), es = Write("b.es", "uno\ndos\n");
  EXPECT_THAT(error(en + "," + es), HasSubstr(en + ":3: has a sentence where " + es));
  EXPECT_THAT(error((dir_ / "missing.tsv").string()), HasSubstr("cannot read parallel text"));
  EXPECT_THAT(error(Write("blank.tsv", "\n\n")), HasSubstr("holds no pairs"));
}

TEST_F(NmtCorpusTest, AVocabularyTrainsLoadsAndRoundTrips) {
  std::vector<std::string> lines;
  for (int i = 0; i < 300; ++i) lines.push_back(absl::StrCat("the small cat ", i, " sat on the mat."));
  const std::string path = (dir_ / "v.model").string();
  auto trained = SubwordModel::Train(lines, 64, path);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_GT(trained->size(), 8);
  EXPECT_LE(trained->size(), 64);
  const Ints ids = trained->Encode("the small cat 7 sat.");
  EXPECT_FALSE(ids.empty());
  for (int64_t id : ids) EXPECT_GE(id, 4);  // the specials are not text
  Ints with = ids;
  with.insert(with.begin(), SubwordModel::kBos);
  with.push_back(SubwordModel::kEos);
  with.push_back(17);  // after </s>: not read
  EXPECT_EQ(trained->Decode(with), "the small cat 7 sat.");
  auto loaded = SubwordModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->Encode("the mat."), trained->Encode("the mat."));
  const std::string not_a_model = Write("words.txt", "the\ncat\n");
  auto bad = SubwordModel::Load(not_a_model);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr(not_a_model + "' is not a SentencePiece model"));
}

// Rows are the same pairs as the whole batch's rows; an epoch visits every pair once; a source
// made fresh at step s (a resumed run) gives what a running one gives; only rows asked for are
// read and encoded.
TEST_F(NmtCorpusTest, RowsAreShardsOfADeterministicShuffledEpoch) {
  auto corpus = ParallelCorpus::Open(Corpus("train.tsv", 70));
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  std::vector<std::string> text;
  for (int64_t i = 0; i < corpus->size(); ++i) {
    text.push_back(corpus->Read(i)->source);
    text.push_back(corpus->Read(i)->target);
  }
  auto vocab = SubwordModel::Train(text, 100, (dir_ / "v.model").string());
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  auto shared_corpus = std::make_shared<const ParallelCorpus>(*std::move(corpus));
  auto shared_vocab = std::make_shared<const SubwordModel>(*std::move(vocab));
  const graph::Graph g = *graph::zoo::BuildNmt({.batch = 8, .vocab = 100, .length = 16});
  auto make = [&] {
    return *CorpusDataSource::ForGraph(g, shared_corpus, {shared_vocab, shared_vocab},
                                       {.seed = 5, .group = 2});
  };
  std::unique_ptr<CorpusDataSource> data = make();
  EXPECT_EQ(data->steps_per_epoch(), 8);  // 70 / 8, the last 6 pairs of each epoch left out
  std::set<int64_t> epoch;
  for (int64_t step = 0; step < 8; ++step) {
    for (int64_t i : data->Rows(step, 0, 8)) epoch.insert(i);
  }
  EXPECT_EQ(epoch.size(), 64u);
  EXPECT_NE(data->Rows(8, 0, 8), data->Rows(0, 0, 8));  // the next epoch is shuffled anew
  exec::Batch whole, part;
  ASSERT_TRUE(data->Next(11, whole).ok());
  ASSERT_TRUE(data->NextRows(11, 4, 4, part).ok());
  EXPECT_EQ(data->decoded(), 12);
  for (const char* name : {"src_tokens", "tgt_tokens", "tgt_labels"}) {
    const Ints& w = std::get<Ints>(whole.values.at(name));
    EXPECT_EQ(std::get<Ints>(part.values.at(name)), Ints(w.begin() + 4 * 16, w.end())) << name;
  }
  EXPECT_EQ(std::get<Ints>(part.values.at("tgt_lengths")), Ints(4, 16));
  const Ints& labels = std::get<Ints>(whole.values.at("tgt_labels"));
  const Ints& tgt = std::get<Ints>(whole.values.at("tgt_tokens"));
  EXPECT_EQ(tgt[0], SubwordModel::kBos);
  EXPECT_EQ(Ints(labels.begin(), labels.begin() + 15), Ints(tgt.begin() + 1, tgt.begin() + 16));
  exec::Batch resumed;
  ASSERT_TRUE(make()->Next(11, resumed).ok());
  EXPECT_EQ(resumed.values, whole.values);
}

// Length buckets: with the model that masks its padding, the source is padded on the right with
// its lengths and mask; Variant is the shortest bucket holding every source and target (with
// <s> or </s>), FitVariant keeps that many columns; the job's variants are its model at those
// lengths. Misuse is refused.
TEST_F(NmtCorpusTest, BatchesRunAtTheShortestLengthBucketThatHoldsThem) {
  EXPECT_EQ(VariantLengths(48, 4), (Ints{12, 24, 36}));
  EXPECT_EQ(VariantLengths(24, 3), (Ints{8, 16}));
  EXPECT_EQ(VariantLengths(16, 1), Ints{});
  const std::string train = Corpus("train.tsv", 70);
  auto job = MakeCorpusJob({.train = train, .vocab_out = {(dir_ / "v.model").string()},
                            .vocab_size = 100, .length = 24, .batch = 8, .buckets = 3});
  ASSERT_TRUE(job.ok()) << job.status();
  auto g = (*job)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  auto variants = (*job)->ModelVariants(*g);
  ASSERT_TRUE(variants.ok()) << variants.status();
  ASSERT_EQ(variants->size(), 2u);
  EXPECT_EQ((*variants)[0].tensor(*(*variants)[0].FindTensor("src_mask")).shape,
            (graph::Shape{8, 8}));
  EXPECT_EQ((*variants)[1].tensor(*(*variants)[1].FindTensor("tgt_labels")).shape,
            (graph::Shape{8, 16}));
  auto made = (*job)->TrainingData(*g);
  ASSERT_TRUE(made.ok()) << made.status();
  exec::DataSource& data = **made;
  std::set<int> seen;
  for (int64_t step = 0; step < 8; ++step) {
    exec::Batch b;
    ASSERT_TRUE(data.Next(step, b).ok());
    const Ints src = std::get<Ints>(b.values.at("src_tokens"));
    const Ints labels = std::get<Ints>(b.values.at("tgt_labels"));
    const Ints lengths = std::get<Ints>(b.values.at("src_lengths"));
    int64_t needed = 0;
    for (int64_t r = 0; r < 8; ++r) {
      int64_t words = 0, targets = 0;
      for (int64_t t = 0; t < 24; ++t) {
        words += src[r * 24 + t] != SubwordModel::kPad;
        targets += labels[r * 24 + t] != SubwordModel::kPad;
        if (t >= lengths[r]) EXPECT_EQ(src[r * 24 + t], SubwordModel::kPad);  // on the right
      }
      EXPECT_EQ(words, lengths[r]);
      needed = std::max({needed, words, targets});
    }
    const int v = data.Variant(b);
    seen.insert(v);
    const int64_t keep = v == exec::DataSource::kWhole ? 24 : 8 * (v + 1);
    EXPECT_GE(keep, needed) << "step " << step;
    if (v != exec::DataSource::kWhole) EXPECT_LT(keep - 8, needed) << "step " << step;
    exec::Batch fitted = b;
    ASSERT_TRUE(data.FitVariant(v, fitted).ok());
    for (const char* name : {"src_tokens", "tgt_tokens", "tgt_labels"}) {
      const Ints& before = std::get<Ints>(b.values.at(name));
      const Ints& after = std::get<Ints>(fitted.values.at(name));
      ASSERT_EQ(after.size(), static_cast<size_t>(8 * keep)) << name;
      for (int64_t r = 0; r < 8; ++r) {
        EXPECT_EQ(Ints(after.begin() + r * keep, after.begin() + (r + 1) * keep),
                  Ints(before.begin() + r * 24, before.begin() + r * 24 + keep)) << name;
      }
    }
    EXPECT_EQ(std::get<std::vector<float>>(fitted.values.at("src_mask")).size(),
              static_cast<size_t>(8 * keep));
    EXPECT_EQ(std::get<Ints>(fitted.values.at("tgt_lengths")), Ints(8, keep));
    if (v == 1 || v == exec::DataSource::kWhole) {  // a bucket too short for the rows
      exec::Batch shorter = b;
      EXPECT_THAT(data.FitVariant(0, shorter).message(), HasSubstr("does not fit shape variant 0"));
    }
  }
  EXPECT_GE(seen.size(), 2u);  // the sentences of the corpus vary in length
  // Buckets need the model that masks its padding; 0 buckets is refused.
  const graph::Graph unmasked = *graph::zoo::BuildNmt({.batch = 8, .vocab = 100, .length = 24});
  auto corpus = std::make_shared<const ParallelCorpus>(*ParallelCorpus::Open(train));
  auto vocab = std::make_shared<const SubwordModel>(*SubwordModel::Load((dir_ / "v.model").string()));
  EXPECT_THAT(CorpusDataSource::ForGraph(unmasked, corpus, {vocab, vocab},
                                         {.variant_lengths = {8}}).status().message(),
              HasSubstr("variants need the model with src_lengths and src_mask"));
  EXPECT_THAT(MakeCorpusJob({.train = train, .vocab = (dir_ / "v.model").string(), .buckets = 0})
                  .status().message(),
              HasSubstr("length buckets 0"));
}

// Evaluation runs each pass on the shortest length bucket that holds what it reads; padding is
// inert in the job's model, so the metrics and decodes are those of every pass at the whole
// length.
TEST_F(NmtCorpusTest, EvaluatingOnLengthBucketsGivesTheWholeLengthsResults) {
  const std::string train = Corpus("train.tsv", 80);
  const std::string vocab = (dir_ / "v.model").string();
  auto bucketed = MakeCorpusJob({.train = train, .vocab_out = {vocab}, .vocab_size = 90,
                                 .length = 24, .batch = 4, .buckets = 4});
  ASSERT_TRUE(bucketed.ok()) << bucketed.status();
  auto whole = MakeCorpusJob({.train = train, .vocab = vocab, .length = 24, .batch = 4,
                              .buckets = 1});
  ASSERT_TRUE(whole.ok()) << whole.status();
  auto g = (*bucketed)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  const Params params = RandomParams(*g, 7);  // random weights decode varied ids
  const EvalOptions options{.batches = 2, .threads = 1, .show = 4};
  auto a = (*bucketed)->Evaluate({&*g, &params, nullptr}, options);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = (*whole)->Evaluate({&*g, &params, nullptr}, options);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->metrics.size(), b->metrics.size());
  for (size_t i = 0; i < a->metrics.size(); ++i) {
    EXPECT_EQ(a->metrics[i].first, b->metrics[i].first);
    EXPECT_NEAR(a->metrics[i].second, b->metrics[i].second,
                1e-5 * std::max(1.0, std::abs(b->metrics[i].second)))
        << a->metrics[i].first;
  }
  EXPECT_EQ(a->samples, b->samples);  // the same greedy decodes
  EXPECT_GT(a->metrics[2].second, 0.0);  // a real loss, not a degenerate one
}

// The job decodes step by step: the encoder once per group of sentences, then one pass of the
// decoder step (graph::zoo::BuildNmtDecoderStep) per position, each row's state gathered from
// the hypothesis it extends. That gives the decodes of running the whole model per position,
// greedy and with beam 2 (hypotheses that reorder between passes), on a bucket shorter than the
// model and on the whole length, with the same teacher-forced metrics.
TEST_F(NmtCorpusTest, StepByStepDecodingGivesTheWholeModelsDecodes) {
  const std::string train = Corpus("train.tsv", 40);
  const std::string vocab_file = (dir_ / "v.model").string();
  constexpr int64_t kBatch = 4, kLength = 24;
  auto job = MakeCorpusJob({.train = train, .vocab_out = {vocab_file}, .vocab_size = 90,
                            .length = kLength, .batch = kBatch});
  ASSERT_TRUE(job.ok()) << job.status();
  auto vocab = Vocabularies::Load(vocab_file);
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  auto corpus = ParallelCorpus::Open(train);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  const graph::zoo::NmtSize size{.batch = kBatch, .vocab = (*vocab).source->size(),
                                 .length = kLength, .mask_padding = true};
  auto g = graph::zoo::BuildNmt(size);
  ASSERT_TRUE(g.ok()) << g.status();
  auto classes = AddLogitsOutput(*g);
  ASSERT_TRUE(classes.ok()) << classes.status();
  const Params params = RandomParams(*g, 11);
  const TrainedModel model{&*g, &params, nullptr};
  auto whole = EvaluationProgram(*g, model, {.threads = 1});
  ASSERT_TRUE(whole.ok()) << whole.status();
  // The whole model and, for sources of up to 12 tokens, a 12-position one.
  graph::zoo::NmtSize half = size;
  half.length = kLength / 2;
  auto g12 = graph::zoo::BuildNmt(half);
  ASSERT_TRUE(g12.ok() && AddLogitsOutput(*g12).ok());
  auto short_program = EvaluationProgram(*g12, model, {.threads = 1});
  ASSERT_TRUE(short_program.ok()) << short_program.status();
  const ProgramFor at = [&](int64_t needed) -> absl::StatusOr<ProgramAtLength> {
    if (needed <= half.length) return ProgramAtLength{short_program->get(), half.length};
    return ProgramAtLength{whole->get(), kLength};
  };
  std::map<int64_t, std::unique_ptr<exec::TrainingProgram>> steps;
  std::set<int64_t> step_lengths;  // the source lengths the steps ran at
  const ProgramFor step = [&](int64_t needed) -> absl::StatusOr<ProgramAtLength> {
    const int64_t sources = needed <= half.length ? half.length : kLength;
    step_lengths.insert(sources);
    if (!steps.contains(sources)) {
      graph::zoo::NmtSize s = size;
      s.length = sources;
      absl::StatusOr<graph::Graph> sg = graph::zoo::BuildNmtDecoderStep(s);
      if (!sg.ok()) return sg.status();
      absl::StatusOr<std::unique_ptr<exec::TrainingProgram>> p =
          EvaluationProgram(*sg, model, {.threads = 1});
      if (!p.ok()) return p.status();
      steps[sources] = std::move(*p);
    }
    return ProgramAtLength{steps[sources].get(), sources};
  };
  auto data = CorpusDataSource::ForGraph(
      *g, std::make_shared<const ParallelCorpus>(std::move(*corpus)), *vocab, {.shuffle = false});
  ASSERT_TRUE(data.ok()) << data.status();
  int64_t varied = 0;
  for (int64_t batch_index = 0; batch_index < 4; ++batch_index) {
    exec::Batch inputs;
    ASSERT_TRUE((*data)->Next(batch_index, inputs).ok());
    for (const int64_t beam : {1, 2}) {
      EvalTotals by_model, by_step;
      auto a = EvaluateBatch(at, nullptr, inputs, kBatch, kLength, *classes, {.beam = beam},
                             by_model);
      ASSERT_TRUE(a.ok()) << a.status();
      auto b = EvaluateBatch(at, step, inputs, kBatch, kLength, *classes, {.beam = beam},
                             by_step);
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(*a, *b) << "batch " << batch_index << ", beam " << beam;
      EXPECT_EQ(by_model.loss_sum, by_step.loss_sum);
      EXPECT_EQ(by_model.accuracy.total, by_step.accuracy.total);
      for (const Ints& row : *b) {
        varied += static_cast<int64_t>(std::set<int64_t>(row.begin(), row.end()).size());
      }
    }
  }
  EXPECT_EQ(step_lengths, (std::set<int64_t>{half.length, kLength}));  // both held the sources
  EXPECT_GT(varied, 4 * 2 * kBatch * 2);  // the decodes are not one repeated id
}

// Evaluation scores every held-out pair once: 6 pairs at batch 4 are two batches, the second's
// last two rows wrapped around and left out, with the metrics of batch 2 (three whole batches);
// beam search evaluates too, and --predictions gets one source<TAB>translation line per pair.
TEST_F(NmtCorpusTest, EvaluationScoresEveryHeldOutPairOnce) {
  const std::string train = Corpus("train.tsv", 120);  // every 20th held out: 6 pairs
  const std::string vocab = (dir_ / "v.model").string();
  auto four = MakeCorpusJob({.train = train, .vocab_out = {vocab}, .vocab_size = 90,
                             .length = 16, .batch = 4});
  ASSERT_TRUE(four.ok()) << four.status();
  auto two = MakeCorpusJob({.train = train, .vocab = vocab, .length = 16, .batch = 2});
  ASSERT_TRUE(two.ok()) << two.status();
  auto beam = MakeCorpusJob({.train = train, .vocab = vocab, .length = 16, .batch = 4,
                             .decode = {.beam = 2}});
  ASSERT_TRUE(beam.ok()) << beam.status();
  auto g4 = (*four)->Model(0);
  auto g2 = (*two)->Model(0);
  ASSERT_TRUE(g4.ok() && g2.ok());
  const Params params = RandomParams(*g4, 3);
  const std::string predictions = (dir_ / "p.tsv").string();
  EvalOptions options{.batches = 8, .threads = 1, .show = 6, .predictions = predictions};
  auto a = (*four)->Evaluate({&*g4, &params, nullptr}, options);
  ASSERT_TRUE(a.ok()) << a.status();
  options.predictions.clear();
  auto b = (*two)->Evaluate({&*g2, &params, nullptr}, options);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->metrics.size(), 4u);
  EXPECT_EQ(a->metrics[3], (std::pair<std::string, double>{"sentences", 6}));
  for (size_t i = 0; i < a->metrics.size(); ++i) {
    EXPECT_NEAR(a->metrics[i].second, b->metrics[i].second,
                1e-5 * std::max(1.0, std::abs(b->metrics[i].second)))
        << a->metrics[i].first;
  }
  EXPECT_EQ(a->samples, b->samples);
  std::ifstream in(predictions);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 6u);
  for (size_t i = 0; i < lines.size(); ++i) {
    // "the ... cat 19 sat." is the first held-out source (every 20th pair from the 20th)
    EXPECT_EQ(lines[i].substr(0, lines[i].find('\t')),
              ParallelCorpus::Open(train)->Read(20 * static_cast<int64_t>(i) + 19)->source);
    EXPECT_NE(a->samples[i].find(lines[i].substr(lines[i].find('\t') + 1)), std::string::npos);
  }
  auto c = (*beam)->Evaluate({&*g4, &params, nullptr}, options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->metrics[3], (std::pair<std::string, double>{"sentences", 6}));
  EXPECT_EQ(c->metrics[0], a->metrics[0]);  // teacher forcing does not depend on the decoder
}

TEST_F(NmtCorpusTest, TheJobSizesItsModelFromTheVocabularyAndEvaluates) {
  const std::string train = Corpus("train.tsv", 80);
  auto job = MakeCorpusJob({.train = train, .vocab_out = {(dir_ / "v.model").string()},
                            .vocab_size = 90, .length = 16, .batch = 4});
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*job)->BuildsModel());
  auto g = (*job)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  auto vocab = SubwordModel::Load((dir_ / "v.model").string());
  ASSERT_TRUE(vocab.ok());
  EXPECT_EQ(g->tensor(*g->FindTensor("classifier")).shape, (graph::Shape{16 * 4, vocab->size()}));
  EXPECT_TRUE((*job)->TrainingData(*g).ok());
  std::map<std::string, std::vector<float>> params;  // untrained: zeros are enough to run
  for (const graph::Tensor& t : g->tensors()) {
    if (t.role == graph::TensorRole::kParameter) {
      params[t.name].assign(graph::NumElements(t.shape), 0.f);
    }
  }
  auto e = (*job)->Evaluate({&*g, &params, nullptr}, {.batches = 2, .threads = 1, .show = 1});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->metrics.size(), 4u);
  EXPECT_EQ(e->metrics[1].first, "sacrebleu");
  EXPECT_EQ(e->metrics[3], (std::pair<std::string, double>{"sentences", 4}));  // 80 / 20 held out
  EXPECT_EQ(e->samples.size(), 1u);
  auto bad = MakeCorpusJob({.train = train, .vocab = train});
  EXPECT_THAT(bad.status().message(), HasSubstr("is not a SentencePiece model"));
}

// One vocabulary per side: each trained on its own side's text, the model's source embedding
// and classifier sized for each, sources encoded with the source's and targets with the
// target's; a model too small for either side and a --vocab of three files are refused.
TEST_F(NmtCorpusTest, VocabulariesPerSideSizeTheirOwnSideOfTheModel) {
  const std::string train = Corpus("train.tsv", 80);
  const std::vector<std::string> out = {(dir_ / "src.model").string(),
                                        (dir_ / "tgt.model").string()};
  auto job = MakeCorpusJob({.train = train, .vocab_out = out, .vocab_size = 60, .length = 16,
                            .batch = 4});
  ASSERT_TRUE(job.ok()) << job.status();
  auto v = Vocabularies::Load(out[0] + "," + out[1]);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_FALSE(v->shared());
  auto g = (*job)->Model(0);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensor(*g->FindTensor("encoder.embedding.weight")).shape[0], v->source->size());
  EXPECT_EQ(g->tensor(*g->FindTensor("decoder.embedding.weight")).shape[0], v->target->size());
  EXPECT_EQ(g->tensor(*g->FindTensor("classifier")).shape[1], v->target->size());
  auto corpus = ParallelCorpus::Open(train);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  auto shared_corpus = std::make_shared<const ParallelCorpus>(*std::move(corpus));
  auto data = CorpusDataSource::ForGraph(*g, shared_corpus, *v, {.shuffle = false});
  ASSERT_TRUE(data.ok()) << data.status();
  exec::Batch b;
  ASSERT_TRUE((*data)->Next(0, b).ok());
  const SentencePair first = *shared_corpus->Read(0);
  const Ints src = v->source->Encode(first.source), tgt = v->target->Encode(first.target);
  ASSERT_NE(src, v->target->Encode(first.source));  // the two vocabularies differ
  const Ints& src_row = std::get<Ints>(b.values.at("src_tokens"));
  const Ints& label_row = std::get<Ints>(b.values.at("tgt_labels"));
  // The job's model masks its padding, which goes on the right of the source.
  const size_t n = std::min<size_t>(src.size(), 16);
  EXPECT_EQ(Ints(src_row.begin(), src_row.begin() + n), Ints(src.begin(), src.begin() + n));
  EXPECT_EQ(std::get<Ints>(b.values.at("src_lengths"))[0], static_cast<int64_t>(n));
  const std::vector<float>& mask = std::get<std::vector<float>>(b.values.at("src_mask"));
  EXPECT_EQ(mask[n - 1], 0.f);
  if (n < 16) EXPECT_EQ(mask[n], -1e9f);
  const size_t m = std::min<size_t>(tgt.size(), 16);
  EXPECT_EQ(Ints(label_row.begin(), label_row.begin() + m), Ints(tgt.begin(), tgt.begin() + m));
  // A model built for a smaller source vocabulary cannot embed the source's pieces.
  const graph::Graph small = *graph::zoo::BuildNmt(
      {.batch = 4, .vocab = 8, .length = 16, .target_vocab = v->target->size()});
  EXPECT_THAT(CorpusDataSource::ForGraph(small, shared_corpus, *v, {}).status().message(),
              HasSubstr("embeds 8 source pieces but the source vocabulary has"));
  EXPECT_THAT(Vocabularies::Load(out[0] + "," + out[1] + "," + out[0]).status().message(),
              HasSubstr("names 3 files"));
}

}  // namespace
}  // namespace tessera::jobs::nmt
