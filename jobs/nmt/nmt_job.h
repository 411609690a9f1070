// The NMT training job: the number-translation task (number_language.h) as the training data of
// the zoo's "nmt" model, and its held-out evaluation: loss and token accuracy with teacher
// forcing, corpus BLEU-4 of greedy decodes, and a few decoded examples.
//
//   std::unique_ptr<jobs::TrainingJob> job = MakeNmtJob({.seed = 1});
//   options.data_source = [&](const graph::Graph& g) { return job->TrainingData(g); };
//   ... train (exec/hybrid_training.h) ...
//   TS_ASSIGN_OR_RETURN(jobs::Evaluation e, job->Evaluate({&g, &run.parameters}, {.batches = 8}));
//   // e.metrics: token_accuracy, bleu, loss; e.samples: "english -> german (reference ...)"
//
// Evaluation runs the trained parameters at the graph's batch over held-out steps 0..batches-1
// (the same sentences for every run of the same seed). Token accuracy counts the positions
// whose label is not <pad> (the words and the final <eos>); BLEU compares the decoded words,
// up to the first <eos>, with the reference German words (metrics.h).
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/jobs/training_job.h"

namespace tessera::jobs::nmt {

struct NmtJobOptions {
  uint64_t seed = 1;  // the data's seed (training and held-out examples)
};

std::unique_ptr<jobs::TrainingJob> MakeNmtJob(const NmtJobOptions& options);

}  // namespace tessera::jobs::nmt
