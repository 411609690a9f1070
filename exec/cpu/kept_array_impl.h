// Internal to the CPU kernels: arrays of the compute type T kept in an OpState (whose arrays are
// float64), and grow-only per-thread scratch buffers.
//
//   T* probs = KeepArray<T>(a.state.reals[0], n);               // forward: n values of T
//   const T* p = KeptArray<T>(a.state.reals.at(0));              // backward of the same node
//   T* tmp = GrowScratch(scratch.tmp, n);                         // scratch.tmp: thread_local
//
// A float kernel keeps float values: half the memory and no conversions. The storage is the
// float64 vector's; the T objects are created in it (placement construction), so reading them
// back through KeptArray is defined behaviour. OpState::bytes() counts the storage (the values,
// plus at most 72 bytes of alignment padding).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace tessera::exec::cpu {

// Sizes `v` to hold n values of T and returns them (uninitialised for T = float). The values
// start on a 64-byte boundary (whole vectors for Eigen's packet code); v[0] records where, so
// KeptArray finds them in a copy of `v` too.
template <typename T>
T* KeepArray(std::vector<double>& v, int64_t n) {
  static_assert(std::is_trivially_destructible_v<T> && sizeof(double) % sizeof(T) == 0 &&
                alignof(double) % alignof(T) == 0);
  constexpr size_t kAlign = 64;
  const size_t bytes = static_cast<size_t>(n) * sizeof(T) + kAlign;  // values and the padding
  v.resize(1 + (bytes + sizeof(double) - 1) / sizeof(double));
  const auto start = reinterpret_cast<uintptr_t>(v.data() + 1);
  const size_t offset = sizeof(double) + (kAlign - start % kAlign) % kAlign;  // from v.data()
  v[0] = static_cast<double>(offset);
  T* p = reinterpret_cast<T*>(reinterpret_cast<char*>(v.data()) + offset);
  std::uninitialized_default_construct_n(p, n);
  return std::launder(p);
}

// The values KeepArray<T> created in `v`.
template <typename T>
const T* KeptArray(const std::vector<double>& v) {
  const auto offset = static_cast<size_t>(v.at(0));
  return std::launder(reinterpret_cast<const T*>(reinterpret_cast<const char*>(v.data()) + offset));
}

// Scratch whose data starts on a 64-byte boundary.
template <typename T>
using ScratchVector = std::vector<T, Eigen::aligned_allocator<T>>;

// `buffer`, grown to at least n elements (never shrunk: a thread_local buffer is allocated once
// per thread and size, not per call); contents are whatever the last user left.
template <typename T, typename Allocator>
T* GrowScratch(std::vector<T, Allocator>& buffer, int64_t n) {
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(static_cast<size_t>(n));
  return buffer.data();
}

}  // namespace tessera::exec::cpu
