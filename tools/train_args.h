// The options of `tessera train` (declared with their help in train_command.cc), shared by the
// command's parts: planning (train_plan.h) and running. Options left at 0 / empty take the
// model's defaults (jobs/job_registry.h) or, when resuming, the checkpoint's (train_plan.h).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/string_view.h"
#include "tessera/comm/backend.h"

namespace tessera::tools {

struct TrainArgs {
  std::string model, comm = "thread", strategy = "auto", cluster = "local", optimizer, op_times;
  std::string lr_schedule = "constant";
  int64_t workers = 2, steps = 0, batch = 0, seed = 1, threads = 0, timeout_s = 60, warmup = 0;
  double lr = 0, clip_norm = 0;
  bool report = false, quiet = false;
  std::string report_json, save_params, checkpoint, data = "task", metrics_json, samples;
  int64_t checkpoint_every = 0, eval_batches = -1;
  int64_t bucket_bytes = 0, first_bucket_bytes = 0;  // 0: the plan's (file's or planner's)
  std::string trace;  // --trace FILE: the last trace_steps steps' timeline
  std::string device = "cpu";  // --device: where each worker's step runs (exec/backend)
  std::string loss, target = "target";  // --loss, --target: a loss attached to the logits
  bool tf32 = false;
  int64_t trace_steps = 3;
  // nmt and ocr on files (tools/train_job.h): --train/--valid/--test FILE; nmt: --vocab MODEL,
  // --vocab-size, --separate-vocab, --max-length, --length-buckets, --dropout, --beam,
  // --length-penalty, --no-repeat-ngram; ocr: --charset FILE, --width, --augment; both:
  // --predictions FILE.
  std::string train_file, valid_file, test_file, vocab, charset, predictions;
  int64_t vocab_size = 8000, max_length = 48, length_buckets = 8, width = 512;
  bool augment = false, separate_vocab = false;
  double dropout = 0;  // nmt: graph::zoo::NmtSize::dropout
  int64_t beam = 1;             // nmt: jobs::nmt::DecodeOptions
  double length_penalty = 0.6;
  int64_t no_repeat_ngram = 0;
  // What a run shows as it goes (tools/train_monitor.h): --eval-every N, --log FILE, --html FILE.
  int64_t eval_every = 0;
  std::string log, html;
  comm::Backend backend = comm::Backend::kThread;  // parsed from `comm`
  std::set<std::string, std::less<>> given;        // the flags on the command line

  bool Given(absl::string_view flag) const { return given.count(flag) > 0; }
};

// Intra-op threads per worker: --threads, or the cores shared by the workers.
int WorkerThreads(const TrainArgs& a);

}  // namespace tessera::tools
