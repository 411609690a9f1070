// The OCR job on text-line images: `tessera train ocr --train FILE [--valid FILE] [--test FILE]`
// with TSVs of `image<TAB>text` (line_corpus.h). The character set is the training texts'
// (or --charset FILE); the "ocr" model is built for it (graph::zoo::BuildOcr: `width`-pixel-wide
// lines, the set's classes and the training texts' longest label, its padding masked), and at
// narrower widths that batches of narrower lines run on (`buckets`).
//
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<TrainingJob> job,
//                       MakeOcrCorpusJob({.train = "ocr/train.tsv", .test = "ocr/test.tsv"}));
//   TS_ASSIGN_OR_RETURN(graph::Graph g, job->Model(/*batch=*/32));
//
// Training batches: OcrCorpusDataSource, shuffled per epoch and grouped by line width, each
// worker reading and decoding only the images of its rows, optionally augmented. Evaluation on --valid (else --test; else
// every 20th training line, which training then leaves out), in file order: CTC loss, greedy
// decoding, character and line accuracy over the lines scored (`lines`), and with
// EvalOptions::predictions every line's reading written as `image<TAB>text` (the format
// bench/compare_tesseract.sh scores beside Tesseract's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tessera/jobs/training_job.h"

namespace tessera::jobs::ocr {

struct OcrCorpusJobOptions {
  uint64_t seed = 1;
  std::string train, valid, test;  // TSVs of image<TAB>text; train is required
  std::string charset;             // a file of the characters; empty: the training texts'
  int64_t width = 512;             // the model's line width in pixels (a multiple of 4)
  bool augment = false;
  int64_t batch = 32;              // the default global batch
  // Line-width buckets: the model is also built at `buckets` widths evenly spaced up to `width`
  // (those too narrow for the longest label left out) and each batch runs at the narrowest that
  // holds its lines (OcrCorpusDataSource's shape variants); 1: every batch at `width`.
  int64_t buckets = 8;
};

// InvalidArgument naming the file and line of a bad TSV, a held-out character outside the set,
// a text longer than the model's frames allow, or an option out of range.
absl::StatusOr<std::unique_ptr<TrainingJob>> MakeOcrCorpusJob(const OcrCorpusJobOptions& options);

}  // namespace tessera::jobs::ocr
