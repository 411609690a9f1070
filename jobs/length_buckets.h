// The shapes a job's model is also built at so that a batch runs at the smallest that holds it
// (exec::DataSource::Variant, exec::HybridOptions::variants): NMT sentence lengths in tokens,
// OCR line widths in CTC frames.
//
//   std::vector<int64_t> lengths = VariantLengths(/*length=*/48, /*buckets=*/4);  // {12, 24, 36}
//   int v = ShortestHolding(lengths, /*needed=*/20);   // 1 (24); kWhole past 36
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::jobs {

// The lengths of `buckets` shapes evenly spaced up to `length` (rounded up), the model's own and
// those below `shortest` left out: e.g. 48 and 4 give {12, 24, 36}. One bucket (or fewer) gives
// none.
std::vector<int64_t> VariantLengths(int64_t length, int64_t buckets, int64_t shortest = 2);

// The index of the first of ascending `lengths` that is at least `needed`, else
// exec::DataSource::kWhole (the model's own length).
int ShortestHolding(const std::vector<int64_t>& lengths, int64_t needed);

}  // namespace tessera::jobs
