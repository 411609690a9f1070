// The job `tessera train` runs: nmt or ocr on their synthetic tasks, nmt on parallel text
// (--train FILE), or none (other models train on random data). Declares the data options.
//
//   AddDataOptions(parser, args);
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<jobs::TrainingJob> job, MakeJob(args, mpi, note));
#pragma once

#include <memory>
#include <ostream>

#include "absl/status/statusor.h"
#include "tessera/jobs/training_job.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/train_args.h"

namespace tessera::tools {

void AddDataOptions(ArgParser& p, TrainArgs& a);

// InvalidArgument (a usage error) for a data option without --train, or one job's option given
// to the other (--vocab to ocr, --charset to nmt, ...).
absl::Status CheckDataOptions(const TrainArgs& a);

// Null when the model has no job. With --train: InvalidArgument for a model other than nmt, a
// bad corpus (naming the file and line) or vocabulary; the vocabulary, unless --vocab names one,
// is trained here and written to DIR/sentencepiece.model (--checkpoint DIR; reused when there),
// beside --save-params FILE, or to the temporary directory, and `note` says where.
absl::StatusOr<std::unique_ptr<jobs::TrainingJob>> MakeJob(const TrainArgs& a, bool mpi,
                                                           std::ostream& note);

}  // namespace tessera::tools
