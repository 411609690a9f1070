// Chrome trace-event JSON (chrome_trace.h).
#include "tessera/base/chrome_trace.h"

#include <map>
#include <utility>

namespace tessera::base {

nlohmann::json ChromeTrace(const std::vector<TraceSpan>& spans, const TraceLayout& layout,
                           nlohmann::json other_data) {
  using nlohmann::json;
  std::map<std::string, int> tids;
  for (const std::string& track : layout.tracks) {
    tids.try_emplace(track, static_cast<int>(tids.size()));
  }
  std::map<int, std::map<int, std::string>> tracks_of_process;
  json events = json::array();
  for (const TraceSpan& s : spans) {
    auto [it, inserted] = tids.try_emplace(s.track, static_cast<int>(tids.size()));
    tracks_of_process[s.process][it->second] = s.track;
    events.push_back({{"name", s.name},
                      {"cat", s.track},
                      {"ph", "X"},
                      {"ts", s.start_us},
                      {"dur", s.duration_us},
                      {"pid", s.process},
                      {"tid", it->second},
                      {"args", s.args}});
  }
  json all = json::array();
  for (const auto& [process, tracks] : tracks_of_process) {
    all.push_back({{"name", "process_name"},
                   {"ph", "M"},
                   {"pid", process},
                   {"tid", 0},
                   {"args", {{"name", layout.process_prefix + " " + std::to_string(process)}}}});
    for (const auto& [tid, track] : tracks) {
      all.push_back({{"name", "thread_name"},
                     {"ph", "M"},
                     {"pid", process},
                     {"tid", tid},
                     {"args", {{"name", track}}}});
      all.push_back({{"name", "thread_sort_index"},
                     {"ph", "M"},
                     {"pid", process},
                     {"tid", tid},
                     {"args", {{"sort_index", tid}}}});
    }
  }
  for (json& e : events) all.push_back(std::move(e));
  return {{"traceEvents", std::move(all)},
          {"displayTimeUnit", "ms"},
          {"otherData", std::move(other_data)}};
}

}  // namespace tessera::base
