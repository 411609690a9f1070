// Internal to the CPU and CUDA Dropout kernels: the one definition of the mask both draw, so
// the back-ends drop the same elements. Element i of a node's tensor in one step is kept when
// its 16-bit draw is >= `threshold` (the ratio rounded to a multiple of 2^-16); the draws come
// from a counter-based hash of (key, i), so any thread on any device computes the same value.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/base/hash.h"

namespace tessera::exec::dropout {

using base::Mix64;

// The mask key of one node in one step: FNV-1a of the node's name, mixed with seed and step, so
// every rank draws the same mask for the same node and step without sharing state.
inline uint64_t Key(const char* name, size_t size, uint64_t seed, int64_t step) {
  return Mix64(Mix64(seed ^ Mix64(base::Fnv1a64(name, size))) ^ static_cast<uint64_t>(step));
}

// Four 16-bit draws for elements 64w + 4k .. 64w + 4k + 3 (k in 0..15), draw q in bits 16q..
TESSERA_HOST_DEVICE inline uint64_t Draws(uint64_t key, int64_t w, int64_t k) {
  return Mix64(key + static_cast<uint64_t>(w) * 16 + static_cast<uint64_t>(k));
}

// Whether element i is kept.
TESSERA_HOST_DEVICE inline bool Keep(uint64_t key, int64_t i, uint32_t threshold) {
  const int64_t b = i % 64;
  return ((Draws(key, i / 64, b / 4) >> (16 * (b % 4))) & 0xffff) >= threshold;
}

}  // namespace tessera::exec::dropout
