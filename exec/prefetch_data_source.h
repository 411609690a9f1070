// A data source that prepares the next batches on a background thread while the current step
// trains, so that reading and decoding files stays off the step's critical path.
//
//   auto data = std::make_unique<PrefetchingDataSource>(std::move(files), {.depth = 2});
//   TS_RETURN_IF_ERROR(data->Next(0, batch));  // step 0 now; steps 1 and 2 start behind it
//
// Sources are deterministic per step (data_source.h), so a prefetched batch is exactly what the
// inner source would have returned when asked: a run with prefetching equals one without, and a
// resumed run, which starts asking at its step, sees the same batches. After a call for step s
// the thread prepares steps s+1 .. s+depth of the same kind (whole batches, or the same rows);
// asking for anything else (a jump, other rows) is served at once, in order, and the stale
// work is dropped. The inner source is only ever called from the background thread.
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/exec/data_source.h"

namespace tessera::exec {

struct PrefetchOptions {
  int depth = 2;  // batches prepared ahead of the last one asked for (at least 1)
};

class PrefetchingDataSource : public DataSource {
 public:
  PrefetchingDataSource(std::unique_ptr<DataSource> inner, const PrefetchOptions& options);
  ~PrefetchingDataSource() override;  // stops and joins the thread
  PrefetchingDataSource(const PrefetchingDataSource&) = delete;
  PrefetchingDataSource& operator=(const PrefetchingDataSource&) = delete;

  // The inner source's answer for this step (its error too, in the same words).
  absl::Status Next(int64_t step, Batch& batch) override;
  bool HasRows() const override;
  absl::Status NextRows(int64_t step, int64_t first, int64_t count, Batch& batch) override;
  int Variant(const Batch& rows) const override { return inner_->Variant(rows); }
  absl::Status FitVariant(int variant, Batch& rows) const override {
    return inner_->FitVariant(variant, rows);
  }

  // Batches the inner source has produced so far (asked and prefetched); for tests.
  int64_t produced() const;

 private:
  struct State;
  struct Request;
  absl::Status Take(const Request& request, Batch& batch);

  std::unique_ptr<DataSource> inner_;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::exec
