// Element types and reductions the communicators understand.
//
//   std::vector<tessera::comm::BFloat16> grads(n, tessera::comm::BFloat16(0.5f));
//   float x = grads[0].ToFloat();                       // 0.5f
//   tessera::comm::DTypeSize(tessera::comm::DType::kBFloat16);   // 2
//   tessera::comm::DTypeName(tessera::comm::DType::kInt64);      // "int64"
//
// BFloat16 is the upper half of an IEEE float32 (8 exponent bits, 7 mantissa bits). Reductions on
// it convert both operands to float, combine them in float and round the result to the nearest
// bfloat16 (ties to even), so a sum that travels around a ring of P ranks is rounded P - 1 times.
#pragma once

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"

namespace tessera::comm {

enum class DType : int32_t { kFloat32 = 0, kBFloat16 = 1, kInt64 = 2 };

// kAverage is the sum divided by the number of ranks; on int64 the division rounds toward zero.
enum class ReduceOp : int32_t { kSum = 0, kAverage = 1, kMax = 2 };

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float value) : bits(Round(value)) {}
  static BFloat16 FromBits(uint16_t raw) {
    BFloat16 b;
    b.bits = raw;
    return b;
  }
  float ToFloat() const {
    uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float out;
    std::memcpy(&out, &wide, sizeof(out));
    return out;
  }
  friend bool operator==(BFloat16 a, BFloat16 b) { return a.bits == b.bits; }

  // Round to nearest, ties to even; NaN stays a (quiet) NaN.
  static uint16_t Round(float value) {
    uint32_t wide;
    std::memcpy(&wide, &value, sizeof(wide));
    if ((wide & 0x7f800000u) == 0x7f800000u && (wide & 0x007fffffu) != 0) {
      return static_cast<uint16_t>((wide >> 16) | 0x0040u);
    }
    const uint32_t lsb = (wide >> 16) & 1u;
    return static_cast<uint16_t>((wide + 0x7fffu + lsb) >> 16);
  }
};
static_assert(sizeof(BFloat16) == 2);

// Bytes per element: 4, 2, 8.
int64_t DTypeSize(DType dtype);
// "float32", "bfloat16", "int64" (or "dtype(N)" for a value outside the enum).
absl::string_view DTypeName(DType dtype);
// "sum", "average", "max".
absl::string_view ReduceOpName(ReduceOp op);
bool IsValidDType(DType dtype);
bool IsValidReduceOp(ReduceOp op);

}  // namespace tessera::comm
