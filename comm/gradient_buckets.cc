// Gradient buckets: layout in reverse registration order, launch in bucket order on a
// communication thread, finish by waiting and copying back.
#include "tessera/comm/gradient_buckets.h"

#include <cstring>
#include <deque>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tessera/base/status_macros.h"

namespace tessera::comm {

class GradientBuckets::Impl {
 public:
  Impl(Communicator& comm, GradientBucketOptions options) : comm_(comm), options_(options) {}
  ~Impl();

  absl::StatusOr<int> Register(absl::string_view name, DataView gradient);
  absl::Status MarkReady(int id);
  absl::Status Finish();
  const std::vector<GradientBucket>& Layout();
  std::vector<int> Launched() const;

 private:
  struct Gradient {
    std::string name;
    DataView view;
    int bucket = -1;
    int64_t offset = 0;  // elements into the bucket's fused buffer
    bool ready = false;
  };
  struct BucketState {
    std::unique_ptr<char[]> fused;  // only for buckets of two or more gradients
    int pending = 0;                // gradients not yet ready this step
    CommHandle handle;
  };

  void FormBuckets();
  void LaunchCompleteBuckets() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void LauncherLoop();
  void Launch(int bucket);
  DataView BucketView(int bucket);

  Communicator& comm_;
  const GradientBucketOptions options_;
  std::vector<Gradient> gradients_;
  std::vector<GradientBucket> layout_;
  std::vector<BucketState> state_;
  bool formed_ = false;

  mutable absl::Mutex mutex_;
  int next_launch_ = 0;             // buckets launch in order 0, 1, ...
  std::deque<int> to_launch_;       // handed to the communication thread
  std::vector<int> launched_;       // this step, in launch order
  int in_launcher_ = 0;             // buckets queued or being launched
  bool stopping_ = false;
  std::thread launcher_;
};

GradientBuckets::Impl::~Impl() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (launcher_.joinable()) launcher_.join();
  for (BucketState& s : state_) s.handle.Wait().IgnoreError();
}

absl::StatusOr<int> GradientBuckets::Impl::Register(absl::string_view name, DataView gradient) {
  if (formed_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gradient '", name, "' registered after the buckets were formed (at the first MarkReady "
        "or Finish); register every gradient before the first step"));
  }
  if (!IsValidDType(gradient.dtype()) || gradient.count() < 0 ||
      (gradient.count() > 0 && gradient.data() == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat("gradient '", name, "' has no valid buffer (",
                                                   gradient.count(), " elements)"));
  }
  gradients_.push_back(Gradient{std::string(name), gradient});
  return static_cast<int>(gradients_.size()) - 1;
}

// Walk the registrations backwards (the order backward produces them). Bucket 0 fills up to
// first_bucket_bytes, the others up to bucket_bytes; a gradient that alone exceeds the
// capacity gets a bucket of its own; a change of dtype starts a new bucket.
void GradientBuckets::Impl::FormBuckets() {
  formed_ = true;
  for (int id = static_cast<int>(gradients_.size()) - 1; id >= 0; --id) {
    Gradient& g = gradients_[id];
    const int64_t bytes = g.view.count() * DTypeSize(g.view.dtype());
    bool fits = !layout_.empty() && layout_.back().dtype == g.view.dtype();
    if (fits) {
      const int64_t capacity =
          layout_.size() == 1 ? options_.first_bucket_bytes : options_.bucket_bytes;
      fits = (layout_.back().count * DTypeSize(g.view.dtype()) + bytes) <= capacity;
    }
    if (!fits) layout_.push_back(GradientBucket{{}, 0, g.view.dtype()});
    GradientBucket& b = layout_.back();
    g.bucket = static_cast<int>(layout_.size()) - 1;
    g.offset = b.count;
    b.gradients.push_back(id);
    b.count += g.view.count();
  }
  state_.resize(layout_.size());
  for (size_t b = 0; b < layout_.size(); ++b) {
    state_[b].pending = static_cast<int>(layout_[b].gradients.size());
    if (layout_[b].gradients.size() > 1) {
      state_[b].fused.reset(new char[layout_[b].count * DTypeSize(layout_[b].dtype)]);
    }
  }
}

const std::vector<GradientBucket>& GradientBuckets::Impl::Layout() {
  if (!formed_) FormBuckets();
  return layout_;
}

std::vector<int> GradientBuckets::Impl::Launched() const {
  absl::MutexLock lock(&mutex_);
  return launched_;
}

DataView GradientBuckets::Impl::BucketView(int bucket) {
  const GradientBucket& b = layout_[bucket];
  if (state_[bucket].fused == nullptr) return gradients_[b.gradients[0]].view;  // in place
  return DataView(state_[bucket].fused.get(), b.count, b.dtype);
}

absl::Status GradientBuckets::Impl::MarkReady(int id) {
  if (!formed_) FormBuckets();
  if (id < 0 || id >= static_cast<int>(gradients_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("MarkReady: no gradient with id ", id, " (",
                                                   gradients_.size(), " registered)"));
  }
  Gradient& g = gradients_[id];
  if (g.ready) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gradient '", g.name, "' was marked ready twice in one step; call Finish() between steps"));
  }
  g.ready = true;
  absl::MutexLock lock(&mutex_);
  --state_[g.bucket].pending;
  LaunchCompleteBuckets();
  return absl::OkStatus();
}

// Hands every complete bucket, in bucket order, to the communication thread.
void GradientBuckets::Impl::LaunchCompleteBuckets() {
  while (next_launch_ < static_cast<int>(layout_.size()) && state_[next_launch_].pending == 0) {
    if (options_.launch_on_caller) {  // numbered here, in the caller's order of collectives
      launched_.push_back(next_launch_);
      Launch(next_launch_++);
      continue;
    }
    to_launch_.push_back(next_launch_);
    launched_.push_back(next_launch_);
    ++in_launcher_;
    ++next_launch_;
  }
  if (!to_launch_.empty() && !launcher_.joinable()) {
    launcher_ = std::thread([this] { LauncherLoop(); });
  }
}

void GradientBuckets::Impl::LauncherLoop() {
  absl::MutexLock lock(&mutex_);
  while (true) {
    mutex_.Await(absl::Condition(
        +[](Impl* self) { return self->stopping_ || !self->to_launch_.empty(); }, this));
    if (to_launch_.empty()) return;
    const int bucket = to_launch_.front();
    to_launch_.pop_front();
    mutex_.Unlock();
    Launch(bucket);
    mutex_.Lock();
    --in_launcher_;
  }
}

// On the communication thread: gather the bucket's gradients into its fused buffer and start
// the all-reduce (it runs on the communicator's async threads, so the next bucket can start).
void GradientBuckets::Impl::Launch(int bucket) {
  const GradientBucket& b = layout_[bucket];
  const int64_t esize = DTypeSize(b.dtype);
  if (state_[bucket].fused != nullptr) {
    for (int id : b.gradients) {
      const Gradient& g = gradients_[id];
      if (g.view.count() > 0) {
        std::memcpy(state_[bucket].fused.get() + g.offset * esize, g.view.data(),
                    g.view.count() * esize);
      }
    }
  }
  state_[bucket].handle = comm_.AllReduceAsync(BucketView(bucket), options_.op);
}

absl::Status GradientBuckets::Impl::Finish() {
  if (!formed_) FormBuckets();
  {
    absl::MutexLock lock(&mutex_);
    for (BucketState& s : state_) s.pending = 0;  // never-ready gradients: reduce them as they are
    LaunchCompleteBuckets();
    mutex_.Await(absl::Condition(
        +[](Impl* self) { return self->in_launcher_ == 0; }, this));
  }
  absl::Status first;
  for (size_t bucket = 0; bucket < layout_.size(); ++bucket) {
    absl::Status status = state_[bucket].handle.Wait();
    state_[bucket].handle = CommHandle();
    if (!status.ok() && first.ok()) first = status;
    if (!status.ok() || state_[bucket].fused == nullptr) continue;
    const int64_t esize = DTypeSize(layout_[bucket].dtype);
    for (int id : layout_[bucket].gradients) {
      const Gradient& g = gradients_[id];
      if (g.view.count() > 0) {
        std::memcpy(g.view.data(), state_[bucket].fused.get() + g.offset * esize,
                    g.view.count() * esize);
      }
    }
  }
  absl::MutexLock lock(&mutex_);
  for (size_t bucket = 0; bucket < layout_.size(); ++bucket) {
    state_[bucket].pending = static_cast<int>(layout_[bucket].gradients.size());
  }
  for (Gradient& g : gradients_) g.ready = false;
  next_launch_ = 0;
  launched_.clear();
  return first;
}

GradientBuckets::GradientBuckets(Communicator& comm, GradientBucketOptions options)
    : impl_(std::make_unique<Impl>(comm, options)) {}
GradientBuckets::~GradientBuckets() = default;
absl::StatusOr<int> GradientBuckets::Register(absl::string_view name, DataView gradient) {
  return impl_->Register(name, gradient);
}
absl::Status GradientBuckets::MarkReady(int id) { return impl_->MarkReady(id); }
absl::Status GradientBuckets::Finish() { return impl_->Finish(); }
const std::vector<GradientBucket>& GradientBuckets::buckets() { return impl_->Layout(); }
std::vector<int> GradientBuckets::launched() const { return impl_->Launched(); }

}  // namespace tessera::comm
