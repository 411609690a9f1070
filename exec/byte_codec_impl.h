// Internal to exec's binary files (checkpoints, parameter files): little-endian field writers
// and bounds-checked readers, and the FNV-1a 64 checksum they carry.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tessera/base/hash.h"

namespace tessera::exec::internal {

using base::Fnv1a64;

// Appends little-endian fields.
class ByteWriter {
 public:
  void Bytes(absl::string_view b) { out_.append(b.data(), b.size()); }
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Little(v, 4); }
  void U64(uint64_t v) { Little(v, 8); }
  void I64(int64_t v) { Little(static_cast<uint64_t>(v), 8); }
  void String(absl::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    Bytes(s);
  }
  void Floats(const std::vector<float>& v) {
    U64(v.size());
    if constexpr (std::endian::native == std::endian::little) {
      Bytes(absl::string_view(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    } else {
      for (float f : v) U32(std::bit_cast<uint32_t>(f));
    }
  }
  std::string Take() && { return std::move(out_); }

 private:
  void Little(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

// Reads little-endian fields; every read checks the bytes left, and the first failure keeps
// its reason in error().
class ByteReader {
 public:
  explicit ByteReader(absl::string_view in) : in_(in) {}
  size_t left() const { return in_.size(); }
  const std::string& error() const { return error_; }
  bool Fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool U8(uint8_t& v, absl::string_view what) {
    uint64_t x = 0;
    if (!Little(x, 1, what)) return false;
    v = static_cast<uint8_t>(x);
    return true;
  }
  bool U32(uint32_t& v, absl::string_view what) {
    uint64_t x = 0;
    if (!Little(x, 4, what)) return false;
    v = static_cast<uint32_t>(x);
    return true;
  }
  bool U64(uint64_t& v, absl::string_view what) { return Little(v, 8, what); }
  bool I64(int64_t& v, absl::string_view what) {
    uint64_t x = 0;
    if (!Little(x, 8, what)) return false;
    v = static_cast<int64_t>(x);
    return true;
  }
  bool String(std::string& s, absl::string_view what) {
    uint32_t n = 0;
    if (!U32(n, what)) return false;
    if (n > in_.size()) return Short(what, n);
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool Floats(std::vector<float>& v, absl::string_view what) {
    uint64_t n = 0;
    if (!U64(n, what)) return false;
    if (n > in_.size() / 4) {
      return Fail(absl::StrCat(what, " announces ", n, " values, ", in_.size(), " bytes are left"));
    }
    v.resize(n);
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(v.data(), in_.data(), n * 4);
      in_.remove_prefix(n * 4);
    } else {
      for (float& f : v) {
        uint64_t bits = 0;
        Little(bits, 4, what);
        f = std::bit_cast<float>(static_cast<uint32_t>(bits));
      }
    }
    return true;
  }

 private:
  bool Short(absl::string_view what, uint64_t need) {
    return Fail(absl::StrCat(what, " needs ", need, " bytes, ", in_.size(), " are left"));
  }
  bool Little(uint64_t& v, size_t n, absl::string_view what) {
    if (in_.size() < n) return Short(what, n);
    v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(n);
    return true;
  }
  absl::string_view in_;
  std::string error_;
};

}  // namespace tessera::exec::internal
