// The HTML reports' shared pieces (html.h).
#include "tessera/base/html.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessera::base {

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

absl::string_view ReportCss() {
  return R"css(
body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#555;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:20px}.card span{color:#555;font-size:12px}
.bad{color:#c00}.good{color:#2a7}
table{border-collapse:collapse;font-size:12px;width:100%}
th,td{border-bottom:1px solid #eee;padding:3px 6px;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:middle}
.legend span{margin-right:14px}
.bar{height:8px;background:#4e79a7;display:inline-block}.cbar{height:8px;background:#e15759;display:inline-block}
table.kv,table.mem{width:auto}
table.kv th{font-weight:normal;color:#555;padding-right:18px;white-space:nowrap}
td.s{white-space:nowrap}
)css";
}

std::string HtmlCard(absl::string_view value, absl::string_view label, absl::string_view cls) {
  return absl::StrCat("<div class=\"card\"><b class=\"", cls, "\">", HtmlEscape(value),
                      "</b><span>", HtmlEscape(label), "</span></div>\n");
}

std::string SvgRoot(double width, double height, absl::string_view label,
                    absl::string_view body) {
  return absl::StrFormat(
      "<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
      "height=\"%.0f\" role=\"img\" aria-label=\"%s\" font-family=\"sans-serif\" "
      "font-size=\"13\">\n%s</svg>\n",
      width, height, width, height, HtmlEscape(label), body);
}

std::string SvgText(double x, double y, absl::string_view text, absl::string_view attributes) {
  return absl::StrFormat("<text x=\"%.2f\" y=\"%.2f\" %s>%s</text>\n", x, y, attributes,
                         HtmlEscape(text));
}

}  // namespace tessera::base
