// The job of `tessera train` (train_job.h).
#include "tessera/tools/train_job.h"

#include <unistd.h>

#include <filesystem>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/job_registry.h"
#include "tessera/jobs/nmt/corpus_job.h"
#include "tessera/jobs/ocr/ocr_corpus_job.h"

namespace tessera::tools {
namespace {

// Where trained vocabularies go (one shared by both sides, or one per side), and whether they
// are already there to reuse (a resumed run).
absl::StatusOr<std::pair<std::vector<std::string>, bool>> VocabularyPaths(const TrainArgs& a,
                                                                          bool mpi) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string prefix;  // the files' names follow it
  if (!a.checkpoint.empty()) {
    fs::create_directories(a.checkpoint, ec);
    prefix = (fs::path(a.checkpoint) / "").string();
  } else if (!a.save_params.empty()) {
    prefix = a.save_params + ".";
  } else {
    prefix = (fs::temp_directory_path(ec) / absl::StrCat("tessera-", getpid(), "-")).string();
  }
  std::vector<std::string> names = {"sentencepiece.model"};
  if (a.separate_vocab) names = {"sentencepiece.src.model", "sentencepiece.tgt.model"};
  std::vector<std::string> paths;
  bool exists = !a.checkpoint.empty();
  for (const std::string& name : names) {
    paths.push_back(prefix + name);
    exists = exists && fs::is_regular_file(paths.back(), ec);
  }
  if (mpi && !exists) {
    return absl::InvalidArgumentError(
        "under --comm mpi every rank must read the same vocabulary: pass --vocab MODEL (train one "
        "with a thread run of the same command, which writes it, or with spm_train)");
  }
  return std::pair{paths, exists};
}

}  // namespace

void AddDataOptions(ArgParser& p, TrainArgs& a) {
  p.AddString("--train", "FILE",
              "nmt: parallel text to train on: a TSV of source<TAB>target lines, or two files "
              "SRC,TGT with one sentence per line (UTF-8); ocr: a TSV of image<TAB>text lines "
              "(PNG paths relative to the TSV)",
              &a.train_file);
  p.AddString("--valid", "FILE", "nmt/ocr: held-out data for the metrics, as --train",
              &a.valid_file)
      .Default("--test, else every 20th example of --train");
  p.AddString("--test", "FILE", "nmt/ocr: held-out data, when there is no --valid", &a.test_file);
  p.AddString("--vocab", "MODEL",
              "nmt: a SentencePiece model to tokenise both sides with, or SRC.model,TGT.model "
              "(one per side)",
              &a.vocab)
      .Default("one trained on --train (kept in the --checkpoint DIR)");
  p.AddInt("--vocab-size", "N", "nmt: pieces of each vocabulary trained on --train",
           &a.vocab_size, 8);
  p.AddFlag("--separate-vocab",
            "nmt: train one vocabulary per side of --train instead of one shared by both",
            &a.separate_vocab);
  p.AddInt("--max-length", "N", "nmt: tokens per sentence on --train (longer are cut)",
           &a.max_length, 4);
  p.AddInt("--length-buckets", "N",
           "nmt/ocr: length buckets: each batch runs at the shortest of N sentence lengths "
           "evenly spaced up to --max-length (ocr: N line widths up to --width) that holds it, "
           "so little of a step is padding (1: every batch at --max-length or --width)",
           &a.length_buckets, 1);
  p.AddPositiveNumber("--dropout", "P",
                      "nmt: while training, zero this fraction (below 1) of the embeddings', the "
                      "encoder's first layer's and the attention's outputs",
                      &a.dropout)
      .Default("none");
  p.AddInt("--beam", "K",
           "nmt: decode the held-out sentences with beam search of K hypotheses each, at most "
           "the batch (1: greedy; each K costs about one greedy decoding's time)",
           &a.beam, 1);
  p.AddNumber("--length-penalty", "ALPHA",
              "nmt with --beam: rank finished hypotheses by log-probability / ((5 + n) / 6)^ALPHA "
              "for n tokens (GNMT's; 0: by log-probability alone, favouring short ones)",
              &a.length_penalty, 0, 10);
  p.AddInt("--no-repeat-ngram", "N",
           "nmt: never repeat an N-gram of vocabulary pieces within a decoded sentence (greedy "
           "or beam; 0: repeats allowed)",
           &a.no_repeat_ngram, 0);
  p.AddString("--charset", "FILE", "ocr: the characters to read (UTF-8)", &a.charset)
      .Default("those of the --train texts");
  p.AddInt("--width", "PIXELS", "ocr: the model's line width on --train (a multiple of 4)",
           &a.width, 8);
  p.AddFlag("--augment", "ocr: noise, blur, small rotation and shear on --train's lines",
            &a.augment);
  p.AddString("--predictions", "FILE",
              "nmt/ocr with --train: write every held-out example's result: nmt "
              "source<TAB>translation, ocr image<TAB>text",
              &a.predictions);
}

absl::Status CheckDataOptions(const TrainArgs& a) {
  const std::string model = absl::AsciiStrToLower(a.model);
  const bool corpus = !a.train_file.empty();
  const std::vector<std::tuple<const char*, bool, const char*>> flags = {
      {"--valid", !a.valid_file.empty(), ""}, {"--test", !a.test_file.empty(), ""},
      {"--vocab", !a.vocab.empty(), "nmt"}, {"--charset", !a.charset.empty(), "ocr"},
      {"--augment", a.augment, "ocr"}, {"--predictions", !a.predictions.empty(), ""},
      {"--vocab-size", a.Given("--vocab-size"), "nmt"},
      {"--separate-vocab", a.separate_vocab, "nmt"},
      {"--max-length", a.Given("--max-length"), "nmt"}, {"--dropout", a.dropout > 0, "nmt"},
      {"--beam", a.Given("--beam"), "nmt"},
      {"--length-penalty", a.Given("--length-penalty"), "nmt"},
      {"--no-repeat-ngram", a.no_repeat_ngram > 0, "nmt"},
      {"--length-buckets", a.Given("--length-buckets"), ""},
      {"--width", a.Given("--width"), "ocr"}};
  if (a.dropout >= 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dropout ", a.dropout, " would drop everything; give a fraction below 1, e.g. 0.2"));
  }
  if (a.separate_vocab && !a.vocab.empty()) {
    return absl::InvalidArgumentError(
        "--separate-vocab trains a vocabulary per side; with --vocab give SRC.model,TGT.model "
        "instead");
  }
  if (corpus && model != "nmt" && model != "ocr") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--train FILE is for the nmt job (parallel text) and the ocr job (text-line images); ",
        a.model, " cannot read it"));
  }
  for (const auto& [flag, given, job] : flags) {
    if (!given) continue;
    if (!corpus) return absl::InvalidArgumentError(absl::StrCat(flag, " goes with --train FILE"));
    if (*job != '\0' && model != job) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " is for the ", job, " job, not ", model));
    }
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::unique_ptr<jobs::TrainingJob>> NmtCorpusJob(const TrainArgs& a, bool mpi,
                                                                std::ostream& note) {
  jobs::nmt::CorpusJobOptions o{.seed = static_cast<uint64_t>(a.seed), .train = a.train_file,
                                .valid = a.valid_file, .test = a.test_file, .vocab = a.vocab,
                                .vocab_size = a.vocab_size, .length = a.max_length,
                                .dropout = a.dropout, .buckets = a.length_buckets,
                                .decode = {.beam = a.beam, .length_penalty = a.length_penalty,
                                           .no_repeat_ngram = a.no_repeat_ngram}};
  if (o.vocab.empty()) {
    TS_ASSIGN_OR_RETURN(const auto where, VocabularyPaths(a, mpi));
    const std::string files = absl::StrJoin(where.first, ",");
    if (where.second) {
      o.vocab = files;
    } else {
      o.vocab_out = where.first;
    }
    const char* what = a.separate_vocab ? "a vocabulary per side" : "a vocabulary";
    note << "tessera train: "
         << (where.second ? absl::StrCat("reusing the vocabulary ", files)
                          : absl::StrCat("training ", what, " of ", a.vocab_size, " pieces on ",
                                         a.train_file, " into ", files))
         << "\n";
  }
  return jobs::nmt::MakeCorpusJob(o);
}

}  // namespace

absl::StatusOr<std::unique_ptr<jobs::TrainingJob>> MakeJob(const TrainArgs& a, bool mpi,
                                                           std::ostream& note) {
  const std::string model = absl::AsciiStrToLower(a.model);
  TS_RETURN_IF_ERROR(CheckDataOptions(a));
  if (a.train_file.empty()) return jobs::JobFor(a.model, static_cast<uint64_t>(a.seed));
  if (model == "nmt") return NmtCorpusJob(a, mpi, note);
  if (model == "ocr") {
    return jobs::ocr::MakeOcrCorpusJob({.seed = static_cast<uint64_t>(a.seed),
                                        .train = a.train_file, .valid = a.valid_file,
                                        .test = a.test_file, .charset = a.charset,
                                        .width = a.width, .augment = a.augment,
                                        .buckets = a.length_buckets});
  }
  return absl::InternalError("CheckDataOptions admits only nmt and ocr with --train");
}

}  // namespace tessera::tools
