// An open-addressing hash map from addresses to pointers, for the caching allocator's live
// blocks: lookups, inserts and erases without a memory allocation (except when it grows).
//
//   tessera::memory::PointerMap<Block> live;
//   live.Insert(block->ptr, block);       // key must not be present, nor null
//   Block* b = live.Find(ptr);            // nullptr when absent
//   live.Erase(ptr);                      // true when it was present
//
// Linear probing over a power-of-two table kept at most half full, a Fibonacci hash of the
// address, and backward-shift deletion (no tombstones, so probe sequences stay short).
#pragma once

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/base/check.h"

namespace tessera::memory {

template <typename Value>
class PointerMap {
 public:
  PointerMap() : slots_(kInitialSlots) {}

  Value* Find(const void* key) const {
    for (size_t i = Home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }

  void Insert(const void* key, Value* value) {
    TS_CHECK(key != nullptr);
    if (2 * (size_ + 1) > slots_.size()) Grow();
    size_t i = Home(key);
    while (slots_[i].key != nullptr) {
      TS_CHECK(slots_[i].key != key) << "key inserted twice";
      i = (i + 1) & mask();
    }
    slots_[i] = {key, value};
    ++size_;
  }

  bool Erase(const void* key) {
    size_t i = Home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return false;
      i = (i + 1) & mask();
    }
    // Backward shift: move later entries of the run into the hole when their home allows it.
    for (size_t j = (i + 1) & mask(); slots_[j].key != nullptr; j = (j + 1) & mask()) {
      const size_t home = Home(slots_[j].key);
      // Entry j may fill hole i unless its home lies cyclically in (i, j].
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
    --size_;
    return true;
  }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kInitialSlots = 1024;
  struct Slot {
    const void* key = nullptr;
    Value* value = nullptr;
  };

  size_t mask() const { return slots_.size() - 1; }
  size_t Home(const void* key) const {
    const uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> (64 - std::countr_zero(slots_.size())));
  }
  void Grow() {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slots_.size() * 2));
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.key != nullptr) Insert(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace tessera::memory
