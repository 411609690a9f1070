// The self-contained HTML report of a training run (`tessera train --html FILE`), in the plan
// report's style (base/html.h): cards with the final loss, the throughput, the time and the
// last evaluation, SVG curves of the loss, the learning rate, the samples per second and each
// held-out metric over the steps, and a table of the evaluations. Inline CSS and SVG, no
// scripts, no network; every name is escaped.
//
//   TrainingHistory h{.run = {.model = "nmt", .workers = 2, .global_batch = 32, .steps = 100}};
//   options.worker.on_step = [&](const StepRecord& s) { h.steps.push_back(s); };
//   ...                                                  // TrainHybrid, evaluations into h.evals
//   TS_RETURN_IF_ERROR(base::WriteFileAtomically("run.html", TrainingHtml(h), "HTML report"));
#pragma once

#include <string>

#include "tessera/exec/training_log.h"

namespace tessera::exec {

std::string TrainingHtml(const TrainingHistory& history);

}  // namespace tessera::exec
