// The NMT job on parallel text: `tessera train nmt --train FILE [--valid FILE] [--test FILE]`.
// The vocabularies are SentencePiece models (subword_model.h): --vocab MODEL (shared) or
// SRC.model,TGT.model (one per side), or trained on the training text: one on both sides,
// written to vocab_out[0], or one per side, written to vocab_out[0] and vocab_out[1]; the "nmt"
// model is built for them (graph::zoo::BuildNmt: its vocabularies, `length` tokens per sentence
// and `dropout`).
//
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<TrainingJob> job,
//                       MakeCorpusJob({.train = "train.tsv", .valid = "valid.tsv",
//                                      .vocab_out = {"ck/sentencepiece.model"}}));
//   TS_ASSIGN_OR_RETURN(graph::Graph g, job->Model(/*batch=*/64));
//
// Training batches: CorpusDataSource, shuffled per epoch, grouped by length, each worker reading
// and encoding only its rows, each batch run at the shortest length bucket that holds it (the
// model is BuildNmt's with mask_padding: padding changes nothing). Evaluation on --valid (else
// --test; else the last 5% of the training file, which training then leaves out: `held_out`
// below), in file order, every pair once: loss and token accuracy with teacher forcing, and
// the BLEU of the decodes (greedy, or beam search: `decode`) against the reference text
// (metrics.h), as "sacrebleu" (0-100).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/jobs/nmt/beam_decoder.h"
#include "tessera/jobs/training_job.h"

namespace tessera::jobs::nmt {

struct CorpusJobOptions {
  uint64_t seed = 1;
  std::string train, valid, test;  // parallel_corpus.h's specs; train is required
  std::string vocab;               // existing SentencePiece model(s), "MODEL" or "SRC,TGT";
                                   // empty: train them
  std::vector<std::string> vocab_out;  // where trained vocabularies go: one path (shared by
                                       // both sides) or two (source, target)
  int64_t vocab_size = 8000;       // pieces of each trained vocabulary
  int64_t length = 48;             // tokens per sentence (with <s> or </s>); longer are cut
  int64_t batch = 32;              // the default global batch
  double dropout = 0;              // graph::zoo::NmtSize::dropout
  // Sentence-length buckets: batches run at the shortest of `buckets` lengths evenly spaced up
  // to `length` that holds them (shape variants; the model masks its padding, so a batch's
  // result does not depend on the length it runs at). 1: every batch at `length`.
  int64_t buckets = 8;
  DecodeOptions decode;  // how held-out sentences are decoded (beam_decoder.h)
};

// InvalidArgument naming the file and line of a bad corpus, the vocabulary file that is not
// SentencePiece, or an option out of range; the vocabulary is trained (or loaded) here.
absl::StatusOr<std::unique_ptr<TrainingJob>> MakeCorpusJob(const CorpusJobOptions& options);

}  // namespace tessera::jobs::nmt
