// Internal helpers of the plan and recommendation writers: HTML escaping and the
// SVG charts. Not part of the public interface.
//
//   HtmlEscape("a<b");       // "a&lt;b"
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tessera/base/text_format.h"

namespace tessera::partitioner {
struct Plan;
}  // namespace tessera::partitioner

namespace tessera::partitioner::internal {

// Numbers and tables come from base/text_format.h (HumanSeconds, HumanBytes, ...).
std::string HtmlEscape(absl::string_view text);

// SVG charts of the HTML report (plan_output_svg.cc), each a complete <svg> element.
std::string StrategyColor(absl::string_view strategy_name);  // "#4e79a7"
std::string StrategyStripSvg(const Plan& plan);    // one coloured cell per layer
std::string MemorySvg(const Plan& plan);           // peak per device against capacity
std::string StepTimeSvg(const Plan& plan);         // compute / exposed / hidden vs baselines

}  // namespace tessera::partitioner::internal
