// Human-readable numbers and plain-text tables, for the tables the tools print.
//
//   HumanCount(61100840)      // "61.1M"
//   HumanBytes(3 << 20)       // "3.00 MiB"
//   HumanBytesExact(3 << 20)  // "3 MiB"
//   HumanBytesExact(1610612737)  // "1.50 GiB (1610612737 bytes)"
//   HumanFlops(1.42e9)        // "1.42G"
//   HumanSeconds(0.0123)      // "12.3 ms"
//   ParseByteSize("4MiB")     // 4194304 (also "4 MiB", "1.5KiB", "4MB" = 4000000, "512")
//   WithThousands(61100840)   // "61,100,840"
//   Elide("/encoder/layers.0/self_attn/MatMul", 16)   // "/encod.../MatMul"
//   WrapText("a long note ...", 100, 6)   // lines of at most 100 columns after 6 columns
//   RenderTable({"name", "params"}, {false, true}, {{"fc1", "4.10M"}, {}, {"total", "4.10M"}});
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::base {

std::string HumanCount(double value);   // SI: "999", "61.1M", "138M"
std::string HumanBytes(double bytes);   // binary: "512 B", "3.00 MiB"
// For messages, where the exact count matters: "512 bytes", "1 byte", "3 MiB" (an exact multiple
// of its unit), else HumanBytes with the count: "1.50 GiB (1610612737 bytes)".
std::string HumanBytesExact(int64_t bytes);
std::string HumanFlops(double flops);   // SI: "1.42G"
std::string HumanSeconds(double seconds);  // "850 ns", "12.3 us", "4.56 ms", "1.23 s", "12.5 min", "2.50 h"
// A size in bytes as people write it: a decimal number, optionally followed (after a space or
// not) by a unit: B, KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of 1000),
// the unit's case ignored; no unit means bytes. A fraction rounds to the nearest byte.
// InvalidArgument quoting the text for anything else, a negative size or one above 2^62.
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// An exact integer with a comma between groups of three digits: "999", "1,024", "-4,096".
std::string WithThousands(int64_t value);

// `text` wrapped at spaces for a block that starts at column `indent`: lines of at most `width`
// columns (a longer word stands alone), joined by "\n" + `indent` spaces, so that the caller
// writes the first line after its own `indent` columns.
//   "  [1] " + WrapText("needs 20.7 GiB per device ...", 100, 6)
std::string WrapText(absl::string_view text, size_t width, size_t indent);

// Shortens `text` to at most `width` characters with "..." in the middle.
std::string Elide(const std::string& text, size_t width);

// A table: columns padded to their widest cell, `right[c]` right-aligns column c,
// a rule under the header, and an empty row drawn as a rule.
std::string RenderTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace tessera::base
