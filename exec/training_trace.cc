// The measured timeline as a Chrome trace (training_trace.h).
#include "tessera/exec/training_trace.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/chrome_trace.h"
#include "tessera/base/json_reader.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/gather_text.h"

namespace tessera::exec {

using nlohmann::json;

json TrainingTrace(const std::vector<std::vector<TraceEvent>>& workers,
                   const TrainingTraceInfo& info) {
  std::vector<base::TraceSpan> spans;
  int64_t first_step = -1, last_step = -1;
  double origin_s = 0;
  bool any = false;
  for (const std::vector<TraceEvent>& events : workers) {
    for (const TraceEvent& e : events) {
      origin_s = any ? std::min(origin_s, e.start_s) : e.start_s;
      any = true;
    }
  }
  for (size_t w = 0; w < workers.size(); ++w) {
    for (const TraceEvent& e : workers[w]) {
      json args = {{"step", e.step}};
      if (!e.collective.empty()) {
        args["collective"] = e.collective;
        args["bytes"] = e.bytes;
      }
      spans.push_back({.name = e.name, .track = e.track, .process = static_cast<int>(w),
                       .start_us = (e.start_s - origin_s) * 1e6, .duration_us = e.duration_s * 1e6,
                       .args = std::move(args)});
      if (first_step < 0 || e.step < first_step) first_step = e.step;
      last_step = std::max(last_step, e.step);
    }
  }
  const base::TraceLayout layout{.process_prefix = "worker",
                                 .tracks = {kComputeTrack, kActivationsTrack, kGradientsTrack}};
  return base::ChromeTrace(
      spans, layout,
      {{"model", info.model},
       {"backend", info.backend},
       {"workers", workers.size()},
       {"first_step", first_step},
       {"last_step", last_step},
       {"time_origin", "the earliest span; workers aligned at a barrier after training"}});
}

std::string EncodeTraceEvents(const std::vector<TraceEvent>& events) {
  json all = json::array();
  for (const TraceEvent& e : events) {
    all.push_back({e.name, e.track, e.step, e.start_s, e.duration_s, e.collective, e.bytes});
  }
  return all.dump();
}

absl::StatusOr<std::vector<TraceEvent>> DecodeTraceEvents(absl::string_view text) {
  TS_ASSIGN_OR_RETURN(const json doc,
                      base::ParseJson(text, "trace events", {.expected = "an array of events"}));
  const base::JsonField root(doc, "trace events");
  TS_ASSIGN_OR_RETURN(const size_t n, root.ArraySize());
  std::vector<TraceEvent> out(n);
  for (size_t i = 0; i < n; ++i) {
    const base::JsonField f = root.Element(i);
    TS_ASSIGN_OR_RETURN(const size_t fields, f.ArraySize());
    if (fields != 7) return f.Error(absl::StrCat("expected 7 fields, got ", fields));
    TraceEvent& e = out[i];
    TS_ASSIGN_OR_RETURN(e.name, f.Element(0).String());
    TS_ASSIGN_OR_RETURN(e.track, f.Element(1).String());
    TS_ASSIGN_OR_RETURN(e.step, f.Element(2).Int());
    TS_ASSIGN_OR_RETURN(e.start_s, f.Element(3).Double());
    TS_ASSIGN_OR_RETURN(e.duration_s, f.Element(4).Double());
    TS_ASSIGN_OR_RETURN(e.collective, f.Element(5).String());
    TS_ASSIGN_OR_RETURN(e.bytes, f.Element(6).Int());
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<TraceEvent>>> GatherTraceEvents(comm::Communicator& comm,
                                                                       const StepTrace& trace) {
  // Every rank leaves the barrier at about the same moment: the common origin of their clocks.
  TS_RETURN_IF_ERROR(comm.Barrier());
  const std::vector<TraceEvent> mine = trace.Events(StepTrace::Clock::now());
  TS_ASSIGN_OR_RETURN(std::vector<std::string> texts,
                      comm::AllGatherText(comm, EncodeTraceEvents(mine)));
  std::vector<std::vector<TraceEvent>> all;
  for (size_t r = 0; r < texts.size(); ++r) {
    absl::StatusOr<std::vector<TraceEvent>> events = DecodeTraceEvents(texts[r]);
    if (!events.ok()) {
      return absl::InternalError(absl::StrCat("the trace of rank ", r, ": ",
                                              events.status().message()));
    }
    all.push_back(*std::move(events));
  }
  return all;
}

}  // namespace tessera::exec
