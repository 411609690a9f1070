// Element-wise reduction kernels used by the ring collectives (internal).
//
//   ReduceInto(dst, a, b, n, DType::kFloat32, ReduceOp::kSum);   // dst[i] = a[i] + b[i]
//   DivideBy(dst, n, DType::kFloat32, /*divisor=*/4);            // the "average" step
//
// dst may alias a or b. kAverage combines like kSum; the caller divides once at the end.
#pragma once

#include <cstdint>

#include "tessera/comm/dtype.h"

namespace tessera::comm::internal {

void ReduceInto(void* dst, const void* a, const void* b, int64_t count, DType dtype, ReduceOp op);
void DivideBy(void* data, int64_t count, DType dtype, int64_t divisor);

}  // namespace tessera::comm::internal
