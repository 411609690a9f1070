// Batches prepared ahead on one background thread (prefetch_data_source.h).
#include "tessera/exec/prefetch_data_source.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tessera::exec {

// What a caller asked for: a step's whole batch, or some of its rows.
struct PrefetchingDataSource::Request {
  int64_t step = 0;
  bool rows = false;
  int64_t first = 0, count = 0;

  bool SameKind(const Request& o) const {
    return rows == o.rows && first == o.first && count == o.count;
  }
  bool operator==(const Request& o) const { return step == o.step && SameKind(o); }
};

namespace {

struct Result {
  absl::Status status;
  Batch batch;
};

}  // namespace

struct PrefetchingDataSource::State {
  std::mutex mu;
  std::condition_variable wake;  // the thread: work queued, or stop
  std::condition_variable done;  // callers: a result came in
  std::deque<Request> queue;     // produced in this order
  std::vector<std::pair<Request, Result>> ready;
  bool running = false;  // the thread is producing `current`
  Request current;
  bool stop = false;
  int64_t produced = 0;
  int depth = 2;
  std::thread thread;

  bool Ready(const Request& r) const {
    return std::any_of(ready.begin(), ready.end(), [&](const auto& e) { return e.first == r; });
  }
  bool Coming(const Request& r) const {
    return (running && current == r) || std::find(queue.begin(), queue.end(), r) != queue.end();
  }
};

PrefetchingDataSource::PrefetchingDataSource(std::unique_ptr<DataSource> inner,
                                             const PrefetchOptions& options)
    : inner_(std::move(inner)), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.depth = std::max(1, options.depth);
  s.thread = std::thread([this, &s] {
    for (;;) {
      Request r;
      {
        std::unique_lock<std::mutex> lock(s.mu);
        s.wake.wait(lock, [&] { return s.stop || !s.queue.empty(); });
        if (s.stop) return;
        r = s.queue.front();
        s.queue.pop_front();
        s.running = true;
        s.current = r;
      }
      Result out;
      out.status = r.rows ? inner_->NextRows(r.step, r.first, r.count, out.batch)
                          : inner_->Next(r.step, out.batch);
      {
        std::lock_guard<std::mutex> lock(s.mu);
        s.running = false;
        ++s.produced;
        s.ready.emplace_back(r, std::move(out));
      }
      s.done.notify_all();
    }
  });
}

PrefetchingDataSource::~PrefetchingDataSource() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
}

// Step 1: the request is served first (queued at the front unless it is ready or being made).
// Step 2: wait for it and take it. Step 3: drop what is stale (other kinds, earlier steps) and
// queue the next `depth` steps of the same kind.
absl::Status PrefetchingDataSource::Take(const Request& request, Batch& batch) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (!s.Ready(request) && !(s.running && s.current == request)) {
    s.queue.erase(std::remove(s.queue.begin(), s.queue.end(), request), s.queue.end());
    s.queue.push_front(request);
    s.wake.notify_one();
  }
  s.done.wait(lock, [&] { return s.Ready(request); });
  auto it = std::find_if(s.ready.begin(), s.ready.end(),
                         [&](const auto& e) { return e.first == request; });
  const absl::Status status = it->second.status;
  batch = std::move(it->second.batch);
  const auto stale = [&](const Request& r) {
    return !r.SameKind(request) || r.step <= request.step;
  };
  s.ready.erase(std::remove_if(s.ready.begin(), s.ready.end(),
                               [&](const auto& e) { return stale(e.first); }),
                s.ready.end());
  s.queue.erase(std::remove_if(s.queue.begin(), s.queue.end(), stale), s.queue.end());
  for (int k = 1; k <= s.depth; ++k) {
    Request next = request;
    next.step = request.step + k;
    if (!s.Ready(next) && !s.Coming(next)) s.queue.push_back(next);
  }
  s.wake.notify_one();
  return status;
}

absl::Status PrefetchingDataSource::Next(int64_t step, Batch& batch) {
  return Take({.step = step}, batch);
}

bool PrefetchingDataSource::HasRows() const { return inner_->HasRows(); }

absl::Status PrefetchingDataSource::NextRows(int64_t step, int64_t first, int64_t count,
                                             Batch& batch) {
  return Take({.step = step, .rows = true, .first = first, .count = count}, batch);
}

int64_t PrefetchingDataSource::produced() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->produced;
}

}  // namespace tessera::exec
