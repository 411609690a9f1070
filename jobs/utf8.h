// UTF-8 for the jobs' text files: decoding (strictly: no overlongs, surrogates or code points
// above U+10FFFF) and encoding.
//
//   std::optional<std::u32string> cps = DecodeUtf8("niño");   // {'n', 'i', 0xf1, 'o'}
//   std::string s = EncodeUtf8(U"ñ");                           // "\xc3\xb1"
#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace tessera::jobs {

// nullopt when `text` is not well-formed UTF-8.
std::optional<std::u32string> DecodeUtf8(absl::string_view text);
std::string EncodeUtf8(const std::u32string& code_points);

}  // namespace tessera::jobs
