// Chrome trace-event JSON (what ui.perfetto.dev and chrome://tracing open): processes holding
// named tracks (threads) of spans. `tessera plan --trace` (the predicted step) and `tessera
// train --trace` (the measured steps) both write it, so the two look alike.
//
//   std::vector<base::TraceSpan> spans = {
//       {.name = "fc1 forward", .track = "compute", .process = 0, .start_us = 0,
//        .duration_us = 12},
//       {.name = "gradient bucket 0", .track = "comm", .process = 0, .start_us = 30,
//        .duration_us = 8, .args = {{"bytes", 4096}}}};
//   nlohmann::json trace =
//       base::ChromeTrace(spans, {.process_prefix = "device"}, {{"model", "nmt"}});
//   // {"traceEvents": [metadata ("M") events, then one "X" event per span],
//   //  "displayTimeUnit": "ms", "otherData": {"model": "nmt"}}
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::base {

// One complete ("X") event: on track `track` of process `process`, from start_us for
// duration_us microseconds. `args` is shown when the span is selected.
struct TraceSpan {
  std::string name;
  std::string track;
  int process = 0;
  double start_us = 0;
  double duration_us = 0;
  nlohmann::json args = nlohmann::json::object();
};

struct TraceLayout {
  std::string process_prefix = "device";  // process p is named "<prefix> p"
  // Tracks given thread ids 0, 1, ... in this order (and sorted so); tracks not listed follow in
  // order of first appearance. The same track has the same thread id in every process.
  std::vector<std::string> tracks;
};

// The spans as trace events: a "process_name" metadata event per process, "thread_name" and
// "thread_sort_index" per track a process has spans on, then the spans in the order given
// (ts and dur in microseconds, cat = the track). `other_data` goes to "otherData".
nlohmann::json ChromeTrace(const std::vector<TraceSpan>& spans, const TraceLayout& layout,
                           nlohmann::json other_data = nlohmann::json::object());

}  // namespace tessera::base
