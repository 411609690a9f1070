// Human-readable numbers for tables.
//
//   HumanCount(61100840)      // "61.1M"
//   HumanBytes(3 << 20)       // "3.00 MiB"
//   HumanFlops(1.42e9)        // "1.42G"
//   TextTable t({"name", "params"}, {Align::kLeft, Align::kRight});
//   t.AddRow({"fc1", "4.10M"});
//   std::cout << t.Render();
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::tools {

std::string HumanCount(double value);
std::string HumanBytes(double bytes);
std::string HumanFlops(double flops);

enum class Align { kLeft, kRight };

class TextTable {
 public:
  TextTable(std::vector<std::string> header, std::vector<Align> align);
  void AddRow(std::vector<std::string> cells);
  void AddSeparator();
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// Shortens `text` to at most `width` characters with "..." in the middle.
std::string Elide(const std::string& text, size_t width);

}  // namespace tessera::tools
