// Internal helpers of the plan and recommendation writers: HTML escaping and the
// SVG charts. Not part of the public interface.
//
//   HtmlEscape("a<b");       // "a&lt;b"
//   for (const MemoryComponent& c : MemoryComponents(plan.memory)) ... c.name, c.color, c.bytes
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tessera/base/html.h"
#include "tessera/base/text_format.h"

namespace tessera::partitioner {
struct Plan;
struct MemoryPrediction;
}  // namespace tessera::partitioner

namespace tessera::partitioner::internal {

// Numbers and tables come from base/text_format.h (HumanSeconds, HumanBytes, ...), escaping,
// the style sheet and the SVG elements from base/html.h.
using base::HtmlEscape;

// SVG charts of the HTML report (plan_output_svg.cc), each a complete <svg> element.
std::string StrategyColor(absl::string_view strategy_name);  // "#4e79a7"
std::string StrategyStripSvg(const Plan& plan);    // one coloured cell per layer
std::string MemorySvg(const Plan& plan);           // stacked breakdown per device vs capacity

// The parts of a device's peak, bottom of the memory chart's stack first: parameters,
// gradients, optimizer state and activations always, workspace and the gradient-bucket
// buffers when non-zero. Their bytes add up to MemoryPrediction::peak_bytes of the largest
// device (the planner's devices all hold the same share).
struct MemoryComponent {
  std::string name;   // "parameters"
  std::string color;  // "#4e79a7"
  int64_t bytes = 0;
};
std::vector<MemoryComponent> MemoryComponents(const MemoryPrediction& m);
std::string StepTimeSvg(const Plan& plan);         // compute / exposed / hidden vs baselines

}  // namespace tessera::partitioner::internal
