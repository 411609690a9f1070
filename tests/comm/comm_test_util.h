// Shared helpers for the comm tests: exact test values per (rank, index) and serial references.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"

namespace tessera::comm::testing {

// Small integers (|v| <= 30): sums over 8 ranks stay exact in float32, bfloat16 and int64, so
// results do not depend on the order of reduction.
inline int64_t TestInt(int rank, int64_t i, int salt = 0) {
  return ((rank + 1) * 7 + i * 3 + salt * 11) % 61 - 30;
}

template <typename T> T FromInt(int64_t v);
template <> inline float FromInt<float>(int64_t v) { return static_cast<float>(v) * 0.5f; }
template <> inline BFloat16 FromInt<BFloat16>(int64_t v) { return BFloat16(static_cast<float>(v)); }
template <> inline int64_t FromInt<int64_t>(int64_t v) { return v; }

template <typename T> double AsDouble(T v) { return static_cast<double>(v); }
template <> inline double AsDouble<BFloat16>(BFloat16 v) { return v.ToFloat(); }

template <typename T>
std::vector<T> TestData(int rank, int64_t n, int salt = 0) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = FromInt<T>(TestInt(rank, i, salt));
  return v;
}

// The serial reference of op over ranks 0..size-1 of TestData, element i.
template <typename T>
T Reference(int size, int64_t i, ReduceOp op, int salt = 0) {
  if (op == ReduceOp::kMax) {
    int64_t best = TestInt(0, i, salt);
    for (int r = 1; r < size; ++r) best = std::max(best, TestInt(r, i, salt));
    return FromInt<T>(best);
  }
  int64_t sum = 0;
  for (int r = 0; r < size; ++r) sum += TestInt(r, i, salt);
  if (op == ReduceOp::kSum) return FromInt<T>(sum);
  if constexpr (std::is_same_v<T, int64_t>) {
    return sum / size;  // rounds toward zero
  } else if constexpr (std::is_same_v<T, float>) {
    return FromInt<float>(sum) / static_cast<float>(size);
  } else {
    return BFloat16(FromInt<BFloat16>(sum).ToFloat() / static_cast<float>(size));
  }
}

template <typename T>
bool Same(T a, T b) {
  return a == b;
}

// First difference between got and want, as an error naming `what` and the index.
template <typename T>
absl::Status Compare(const std::string& what, const std::vector<T>& got,
                     const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return absl::InternalError(absl::StrCat(what, ": size ", got.size(), " != ", want.size()));
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!Same(got[i], want[i])) {
      return absl::InternalError(absl::StrCat(what, ": element ", i, " is ", AsDouble(got[i]),
                                              ", expected ", AsDouble(want[i])));
    }
  }
  return absl::OkStatus();
}

// Collective checks against the serial reference; each returns an error naming rank, call, dtype,
// op, size and the first wrong element.
inline std::vector<int64_t> Sizes(int p) {
  return {0, 1, std::max(0, p - 1), p + 1, 97, 100003};
}

template <typename T>
absl::Status CheckAllReduce(Communicator& comm, int64_t n, ReduceOp op) {
  std::vector<T> data = TestData<T>(comm.rank(), n);
  TS_RETURN_IF_ERROR(comm.AllReduce(data, op));
  std::vector<T> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = Reference<T>(comm.size(), i, op);
  return Compare(absl::StrCat("rank ", comm.rank(), " all-reduce ", DTypeName(DTypeOf<T>::value),
                              " ", ReduceOpName(op), " n=", n),
                 data, want);
}

template <typename T>
absl::Status CheckReduceScatter(Communicator& comm, int64_t block, ReduceOp op) {
  const int p = comm.size(), r = comm.rank();
  const std::vector<T> input = TestData<T>(r, block * p);
  std::vector<T> out(block);
  TS_RETURN_IF_ERROR(comm.ReduceScatter(input, out, op));
  std::vector<T> want(block);
  for (int64_t i = 0; i < block; ++i) want[i] = Reference<T>(p, r * block + i, op);
  return Compare(absl::StrCat("rank ", r, " reduce-scatter ", ReduceOpName(op), " block=", block),
                 out, want);
}

template <typename T>
absl::Status CheckAllGather(Communicator& comm, int64_t block) {
  const int p = comm.size();
  const std::vector<T> mine = TestData<T>(comm.rank(), block);
  std::vector<T> out(block * p);
  TS_RETURN_IF_ERROR(comm.AllGather(mine, out));
  std::vector<T> want;
  for (int r = 0; r < p; ++r) {
    std::vector<T> theirs = TestData<T>(r, block);
    want.insert(want.end(), theirs.begin(), theirs.end());
  }
  return Compare(absl::StrCat("rank ", comm.rank(), " all-gather block=", block), out, want);
}

template <typename T>
absl::Status CheckBroadcast(Communicator& comm, int64_t n, int root) {
  std::vector<T> data = TestData<T>(comm.rank(), n);
  TS_RETURN_IF_ERROR(comm.Broadcast(data, root));
  return Compare(absl::StrCat("rank ", comm.rank(), " broadcast root=", root, " n=", n), data,
                 TestData<T>(root, n));
}

// Rank r's input is TestData(r, P * block); block s of its output must be block r of rank s's.
template <typename T>
absl::Status CheckAllToAll(Communicator& comm, int64_t block) {
  const int p = comm.size(), r = comm.rank();
  const std::vector<T> input = TestData<T>(r, block * p);
  std::vector<T> out(block * p);
  TS_RETURN_IF_ERROR(comm.AllToAll(input, out));
  std::vector<T> want;
  for (int s = 0; s < p; ++s) {
    const std::vector<T> theirs = TestData<T>(s, block * p);
    want.insert(want.end(), theirs.begin() + r * block, theirs.begin() + (r + 1) * block);
  }
  return Compare(absl::StrCat("rank ", r, " all-to-all block=", block), out, want);
}

template <typename T>
absl::Status CheckEverything(Communicator& comm) {
  const int p = comm.size();
  for (int64_t n : Sizes(p)) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMax}) {
      TS_RETURN_IF_ERROR(CheckAllReduce<T>(comm, n, op));
    }
    const int64_t block = n > 1000 ? n / 7 : n;  // keep the P-fold buffers modest
    TS_RETURN_IF_ERROR(CheckReduceScatter<T>(comm, block, ReduceOp::kSum));
    TS_RETURN_IF_ERROR(CheckReduceScatter<T>(comm, block, ReduceOp::kAverage));
    TS_RETURN_IF_ERROR(CheckReduceScatter<T>(comm, block, ReduceOp::kMax));
    TS_RETURN_IF_ERROR(CheckAllGather<T>(comm, block));
    TS_RETURN_IF_ERROR(CheckAllToAll<T>(comm, block));
    TS_RETURN_IF_ERROR(CheckBroadcast<T>(comm, n, (n + 1) % p));
  }
  return absl::OkStatus();
}

}  // namespace tessera::comm::testing
