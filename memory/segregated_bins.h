// Segregated free lists with a bitmap: best-fit search over exact size classes in constant time.
// The caching allocator keeps its small pool's free blocks here.
//
//   struct Node { int64_t size; Node* bin_prev; Node* bin_next; };
//   tessera::memory::SegregatedBins<Node> bins(/*granule=*/512, /*max_size=*/2 << 20);
//   bins.Insert(&node);                        // node.size a multiple of 512, <= max_size
//   Node* fit = bins.FindBestFit(3000);        // smallest free size >= 3000, or nullptr
//   bins.Remove(fit);
//
// One intrusive doubly-linked list per size (a multiple of `granule`, a power of two, up to `max_size`, at most
// 4096 classes), one bit per non-empty list, and one summary bit per 64 lists. Finding the
// smallest non-empty class at or above a size takes two count-trailing-zeros. Within a class the
// most recently inserted node comes first (warm in cache). No memory is allocated after
// construction.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "tessera/base/check.h"

namespace tessera::memory {

template <typename Node>
class SegregatedBins {
 public:
  SegregatedBins(int64_t granule, int64_t max_size)
      : shift_(std::countr_zero(static_cast<uint64_t>(granule))),
        heads_(max_size / granule, nullptr),
        words_((heads_.size() + 63) / 64) {
    TS_CHECK(std::has_single_bit(static_cast<uint64_t>(granule))) << "granule " << granule;
    TS_CHECK(max_size % granule == 0 && heads_.size() <= 64 * 64) << max_size;
  }

  void Insert(Node* node) {
    const int64_t c = ClassOf(node->size);
    node->bin_prev = nullptr;
    node->bin_next = heads_[c];
    if (heads_[c] != nullptr) heads_[c]->bin_prev = node;
    heads_[c] = node;
    words_[c >> 6] |= uint64_t{1} << (c & 63);
    summary_ |= uint64_t{1} << (c >> 6);
    ++count_;
  }

  void Remove(Node* node) {
    const int64_t c = ClassOf(node->size);
    if (node->bin_prev != nullptr) {
      node->bin_prev->bin_next = node->bin_next;
    } else {
      TS_CHECK(heads_[c] == node) << "node of " << node->size << " bytes is not in its bin";
      heads_[c] = node->bin_next;
    }
    if (node->bin_next != nullptr) node->bin_next->bin_prev = node->bin_prev;
    node->bin_prev = node->bin_next = nullptr;
    if (heads_[c] == nullptr) {
      words_[c >> 6] &= ~(uint64_t{1} << (c & 63));
      if (words_[c >> 6] == 0) summary_ &= ~(uint64_t{1} << (c >> 6));
    }
    --count_;
  }

  // A node of the smallest size >= `size` (size in (0, max_size]), or nullptr.
  Node* FindBestFit(int64_t size) const {
    const int64_t c = ((size - 1) >> shift_);  // the class of size rounded up to a granule
    const int64_t w = c >> 6;
    // Step 1: a non-empty class in the same word at or above c.
    if (uint64_t bits = words_[w] & (~uint64_t{0} << (c & 63)); bits != 0) {
      return heads_[(w << 6) | std::countr_zero(bits)];
    }
    // Step 2: the first non-empty word above w, then its first non-empty class.
    if (w == 63) return nullptr;
    const uint64_t above = summary_ & (~uint64_t{0} << (w + 1));
    if (above == 0) return nullptr;
    const int64_t w2 = std::countr_zero(above);
    return heads_[(w2 << 6) | std::countr_zero(words_[w2])];
  }

  // The size of the largest free node, 0 when empty.
  int64_t LargestSize() const {
    if (summary_ == 0) return 0;
    const int64_t w = 63 - std::countl_zero(summary_);
    const int64_t c = (w << 6) | (63 - std::countl_zero(words_[w]));
    return (c + 1) << shift_;
  }

  int64_t size() const { return count_; }

 private:
  int64_t ClassOf(int64_t size) const {
    const int64_t c = (size >> shift_) - 1;
    TS_CHECK((size & ((int64_t{1} << shift_) - 1)) == 0 && c >= 0 &&
             c < static_cast<int64_t>(heads_.size()))
        << size;
    return c;
  }

  int shift_;  // log2 of the granule
  std::vector<Node*> heads_;
  std::vector<uint64_t> words_;
  uint64_t summary_ = 0;
  int64_t count_ = 0;
};

}  // namespace tessera::memory
