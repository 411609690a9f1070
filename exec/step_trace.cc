// A rank's measured timeline (step_trace.h).
#include "tessera/exec/step_trace.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessera::exec {
namespace {

double Seconds(StepTrace::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

StepTrace::StepTrace(int64_t steps_kept, std::vector<std::string> node_names)
    : steps_kept_(std::max<int64_t>(1, steps_kept)), node_names_(std::move(node_names)) {}

void StepTrace::Channel::OnCollective(const comm::CollectiveEvent& event) {
  trace_.Add({.name = std::string(event.collective), .track = track_, .start = event.start,
              .end = event.end, .collective = std::string(event.collective),
              .sequence = event.sequence, .bytes = event.payload_bytes});
}

void StepTrace::OnNode(graph::NodeId node, bool backward, double seconds) {
  const Clock::time_point end = Clock::now();
  const Clock::time_point start =
      end - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const std::string& name =
      node >= 0 && static_cast<size_t>(node) < node_names_.size() ? node_names_[node] : "node";
  Add({.name = absl::StrCat(name, backward ? " backward" : " forward"), .track = kComputeTrack,
       .start = start, .end = end});
}

void StepTrace::Add(Span span) {
  absl::MutexLock lock(&mutex_);
  const bool collective = span.track != kComputeTrack;
  if (!recording_ || (collective && !communicating_)) return;
  current_.spans.push_back(std::move(span));
}

void StepTrace::BeginStep(int64_t step) {
  absl::MutexLock lock(&mutex_);
  current_ = Step{.step = step, .start = Clock::now()};
  recording_ = true;
  communicating_ = true;
}

void StepTrace::AddComputeSpan(std::string name, Clock::time_point start, Clock::time_point end) {
  Add({.name = std::move(name), .track = kComputeTrack, .start = start, .end = end});
}

void StepTrace::EndCommunication() {
  absl::MutexLock lock(&mutex_);
  communicating_ = false;
}

void StepTrace::EndStep() {
  absl::MutexLock lock(&mutex_);
  if (!recording_) return;
  recording_ = false;
  communicating_ = false;
  NameCollectives(current_);
  kept_.push_back(std::move(current_));
  current_ = Step{};
  while (static_cast<int64_t>(kept_.size()) > steps_kept_) kept_.pop_front();
}

// An activation collective blocks inside its node's kernel: it takes the name of the compute
// span it overlaps most. The gradient channel's all-reduces are the buckets, numbered in
// launch (sequence) order.
void StepTrace::NameCollectives(Step& step) {
  std::vector<const Span*> compute;
  std::vector<Span*> buckets;
  for (Span& s : step.spans) {
    if (s.track == kComputeTrack) compute.push_back(&s);
    if (s.track == kGradientsTrack) buckets.push_back(&s);
  }
  for (Span& s : step.spans) {
    if (s.track != kActivationsTrack) continue;
    const Span* best = nullptr;
    Clock::duration best_overlap = Clock::duration::zero();
    for (const Span* c : compute) {
      const Clock::duration overlap = std::min(s.end, c->end) - std::max(s.start, c->start);
      if (overlap > best_overlap) {
        best = c;
        best_overlap = overlap;
      }
    }
    if (best != nullptr) s.name = absl::StrCat(best->name, " ", s.collective);
  }
  std::sort(buckets.begin(), buckets.end(),
            [](const Span* a, const Span* b) { return a->sequence < b->sequence; });
  for (size_t k = 0; k < buckets.size(); ++k) {
    buckets[k]->name = absl::StrCat("gradient bucket ", k);
  }
}

std::vector<TraceEvent> StepTrace::Events(Clock::time_point origin) const {
  absl::MutexLock lock(&mutex_);
  std::vector<TraceEvent> out;
  for (const Step& step : kept_) {
    std::vector<const Span*> spans;
    for (const Span& s : step.spans) spans.push_back(&s);
    std::stable_sort(spans.begin(), spans.end(),
                     [](const Span* a, const Span* b) { return a->start < b->start; });
    for (const Span* s : spans) {
      out.push_back({.name = s->name, .track = s->track, .step = step.step,
                     .start_s = Seconds(s->start - origin),
                     .duration_s = Seconds(s->end - s->start), .collective = s->collective,
                     .bytes = s->bytes});
    }
  }
  return out;
}

}  // namespace tessera::exec
