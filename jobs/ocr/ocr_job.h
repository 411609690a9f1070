// The OCR training job: synthetic text lines (text_lines.h) as the training data of the zoo's
// "ocr" model, and its held-out evaluation: CTC loss, greedy CTC decoding, character and line
// accuracy, and a few decoded lines (optionally written as PNG beside their text).
//
//   std::unique_ptr<jobs::TrainingJob> job = MakeOcrJob({.seed = 1});
//   options.data_source = [&](const graph::Graph& g) { return job->TrainingData(g); };
//   ... train (exec/hybrid_training.h) ...
//   TS_ASSIGN_OR_RETURN(jobs::Evaluation e,
//                       job->Evaluate({&g, &run.parameters, &run.buffers},
//                                     {.batches = 8, .samples_dir = "ocr-samples"}));
//   // e.metrics: char_accuracy, line_accuracy, loss; e.files: the PNGs and texts written
//
// Evaluation runs the trained parameters at the graph's batch over held-out steps
// 0..batches-1 with BatchNormalization in evaluation mode (the running statistics in
// `buffers`; without them, those of a fresh model).
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/jobs/training_job.h"

namespace tessera::jobs::ocr {

struct OcrJobOptions {
  uint64_t seed = 1;  // the lines' seed (training and held-out)
};

std::unique_ptr<jobs::TrainingJob> MakeOcrJob(const OcrJobOptions& options);

}  // namespace tessera::jobs::ocr
