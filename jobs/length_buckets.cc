// Shape buckets of a job's model (length_buckets.h).
#include "tessera/jobs/length_buckets.h"

#include "tessera/exec/data_source.h"

namespace tessera::jobs {

std::vector<int64_t> VariantLengths(int64_t length, int64_t buckets, int64_t shortest) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i < buckets; ++i) {
    const int64_t l = (length * i + buckets - 1) / buckets;
    if (l >= shortest && l < length && (out.empty() || out.back() < l)) out.push_back(l);
  }
  return out;
}

int ShortestHolding(const std::vector<int64_t>& lengths, int64_t needed) {
  for (size_t v = 0; v < lengths.size(); ++v) {
    if (lengths[v] >= needed) return static_cast<int>(v);
  }
  return exec::DataSource::kWhole;
}

}  // namespace tessera::jobs
