// Stable hashes: the same value on every machine, compiler and run, for seeds derived from
// names and steps (random data, dropout masks, data splits) and for file checksums.
//
//   uint64_t key = Mix64(seed ^ Mix64(Fnv1a64(name)));   // a name's stream, mixed with a seed
//   uint64_t sum = Fnv1a64(payload);                      // any type with data() and size()
//
// Header-only, and usable in CUDA device code (Mix64).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define TESSERA_HOST_DEVICE __host__ __device__
#else
#define TESSERA_HOST_DEVICE
#endif

namespace tessera::base {

// SplitMix64's finaliser (with its increment): a bijective mix of 64 bits.
TESSERA_HOST_DEVICE inline uint64_t Mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a 64 of `size` bytes.
inline uint64_t Fnv1a64(const void* data, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

// FNV-1a 64 of a string or byte container (anything with data() and size()).
template <typename Bytes>
uint64_t Fnv1a64(const Bytes& bytes) {
  return Fnv1a64(bytes.data(), bytes.size());
}

}  // namespace tessera::base
