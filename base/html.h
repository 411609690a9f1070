// The pieces Tessera's self-contained HTML reports share (the plan report of `tessera plan
// --format html`, the training report of `tessera train --html`): escaping, one style sheet,
// summary cards and SVG elements, so that every report looks and escapes alike. No scripts, no
// network: everything is inline.
//
//   std::string page = absl::StrCat("<style>", ReportCss(), "</style>",
//                                    "<div class=\"cards\">", HtmlCard("1.23 s", "step time"),
//                                    "</div>", SvgRoot(1000, 40, "chart", SvgText(0, 20, "a<b")));
//   HtmlEscape("a<b");   // "a&lt;b"
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace tessera::base {

// & < > " ' as entities: safe in element text and in quoted attribute values.
std::string HtmlEscape(absl::string_view text);

// The reports' style sheet (what goes inside <style>): page, headings, cards, tables, swatches.
absl::string_view ReportCss();

// A summary card: a large value over a small label, both escaped; `cls` ("good", "bad")
// colours the value.
std::string HtmlCard(absl::string_view value, absl::string_view label,
                     absl::string_view cls = "");

// A complete <svg> element of `width` x `height` pixels (its viewBox too), labelled for screen
// readers, in 13px sans-serif; `body` is its inner markup.
std::string SvgRoot(double width, double height, absl::string_view label,
                    absl::string_view body);
// A <text> at (x, y) with extra attributes (e.g. "fill=\"#555\""); the text is escaped.
std::string SvgText(double x, double y, absl::string_view text,
                    absl::string_view attributes = "");

}  // namespace tessera::base
