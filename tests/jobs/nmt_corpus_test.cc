// NMT on parallel text: the corpus reader (jobs/nmt/parallel_corpus.h), the SentencePiece
// vocabulary (subword_model.h), the row-wise data source (corpus_data_source.h) and the job
// (corpus_job.h), on small files written here.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/jobs/nmt/corpus_data_source.h"
#include "tessera/jobs/nmt/corpus_job.h"
#include "tessera/jobs/nmt/parallel_corpus.h"
#include "tessera/jobs/nmt/subword_model.h"

namespace tessera::jobs::nmt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;

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
  const size_t n = std::min<size_t>(src.size(), 16);
  EXPECT_EQ(Ints(src_row.begin() + (16 - n), src_row.begin() + 16),
            Ints(src.begin(), src.begin() + n));
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
