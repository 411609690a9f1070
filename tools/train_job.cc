// The job of `tessera train` (train_job.h).
#include "tessera/tools/train_job.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/job_registry.h"
#include "tessera/jobs/nmt/corpus_job.h"

namespace tessera::tools {
namespace {

constexpr char kVocabName[] = "sentencepiece.model";

// Where a trained vocabulary goes, and whether one is already there to reuse (a resumed run).
absl::StatusOr<std::pair<std::string, bool>> VocabularyPath(const TrainArgs& a, bool mpi) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string path;
  if (!a.checkpoint.empty()) {
    fs::create_directories(a.checkpoint, ec);
    path = (fs::path(a.checkpoint) / kVocabName).string();
  } else if (!a.save_params.empty()) {
    path = a.save_params + "." + kVocabName;
  } else {
    path = (fs::temp_directory_path(ec) / absl::StrCat("tessera-", getpid(), "-", kVocabName)).string();
  }
  const bool exists = !a.checkpoint.empty() && fs::is_regular_file(path, ec);
  if (mpi && !exists) {
    return absl::InvalidArgumentError(
        "under --comm mpi every rank must read one vocabulary: pass --vocab MODEL (train one with "
        "a thread run of the same command, which writes it, or with spm_train)");
  }
  return std::pair{path, exists};
}

}  // namespace

void AddDataOptions(ArgParser& p, TrainArgs& a) {
  p.AddString("--train", "FILE",
              "nmt: parallel text to train on: a TSV of source<TAB>target lines, or two files "
              "SRC,TGT with one sentence per line (UTF-8)",
              &a.train_file);
  p.AddString("--valid", "FILE", "nmt: held-out parallel text for the metrics", &a.valid_file)
      .Default("--test, else every 20th pair of --train");
  p.AddString("--test", "FILE", "nmt: held-out parallel text, when there is no --valid",
              &a.test_file);
  p.AddString("--vocab", "MODEL", "nmt: a SentencePiece model to tokenise with", &a.vocab)
      .Default("one trained on --train (kept in the --checkpoint DIR)");
  p.AddInt("--vocab-size", "N", "nmt: pieces of the vocabulary trained on --train",
           &a.vocab_size, 8);
  p.AddInt("--max-length", "N", "nmt: tokens per sentence on --train (longer are cut)",
           &a.max_length, 4);
}

absl::StatusOr<std::unique_ptr<jobs::TrainingJob>> MakeJob(const TrainArgs& a, bool mpi,
                                                           std::ostream& note) {
  const bool corpus = !a.train_file.empty();
  if (!corpus) {
    for (const auto& [flag, given] :
         {std::pair{"--valid", !a.valid_file.empty()}, std::pair{"--test", !a.test_file.empty()},
          std::pair{"--vocab", !a.vocab.empty()}}) {
      if (given) return absl::InvalidArgumentError(absl::StrCat(flag, " goes with --train FILE"));
    }
    return jobs::JobFor(a.model, static_cast<uint64_t>(a.seed));
  }
  if (absl::AsciiStrToLower(a.model) != "nmt") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--train FILE is for the nmt job (parallel text); ", a.model, " cannot read it"));
  }
  jobs::nmt::CorpusJobOptions o{.seed = static_cast<uint64_t>(a.seed), .train = a.train_file,
                                .valid = a.valid_file, .test = a.test_file, .vocab = a.vocab,
                                .vocab_size = a.vocab_size, .length = a.max_length};
  if (o.vocab.empty()) {
    TS_ASSIGN_OR_RETURN(const auto where, VocabularyPath(a, mpi));
    (where.second ? o.vocab : o.vocab_out) = where.first;
    note << "tessera train: " << (where.second ? "reusing the vocabulary " : "training a vocabulary of ")
         << (where.second ? where.first : absl::StrCat(a.vocab_size, " pieces on ", a.train_file, " into ", where.first))
         << "\n";
  }
  return jobs::nmt::MakeCorpusJob(o);
}

}  // namespace tessera::tools
