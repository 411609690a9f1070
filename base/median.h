// The median of a sample (the mean of the two middle values for an even count; 0 for none):
// what Tessera's timings report, since it resists the odd preempted run.
//
//   double m = base::Median({3.0, 1.0, 2.0});   // 2
#pragma once

#include <algorithm>
#include <vector>

namespace tessera::base {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tessera::base
