// Internal helpers of the plan and recommendation writers: number formatting, a
// plain-text table and HTML escaping. Not part of the public interface.
//
//   FormatSeconds(0.0123);   // "12.3 ms"
//   FormatBytes(3 << 20);    // "3.00 MiB"
//   HtmlEscape("a<b");       // "a&lt;b"
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tessera::partitioner {
struct Plan;
}  // namespace tessera::partitioner

namespace tessera::partitioner::internal {

std::string FormatSeconds(double seconds);  // "850 ns", "12.3 us", "4.56 ms", "1.23 s", "12.5 min", "2.50 h"
std::string FormatBytes(double bytes);      // binary units: "512 B", "3.00 MiB"
std::string FormatCount(double value);      // "61.1M"
std::string FormatFlops(double flops);      // "1.42G"
std::string HtmlEscape(absl::string_view text);

// A plain-text table: columns padded to their widest cell; `right[c]` right-aligns
// column c. An empty row is a rule.
std::string RenderTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                        const std::vector<std::vector<std::string>>& rows);

// SVG charts of the HTML report (plan_output_svg.cc), each a complete <svg> element.
std::string StrategyColor(absl::string_view strategy_name);  // "#4e79a7"
std::string StrategyStripSvg(const Plan& plan);    // one coloured cell per layer
std::string MemorySvg(const Plan& plan);           // peak per device against capacity
std::string StepTimeSvg(const Plan& plan);         // compute / exposed / hidden vs baselines

}  // namespace tessera::partitioner::internal
