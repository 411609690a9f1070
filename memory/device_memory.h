// Device-memory back-ends: the one seam between Tessera's allocators and the memory of a device.
//
//   tessera::memory::HostMemory host(/*capacity=*/1 << 30);  // 1 GiB budget, for tests
//   TS_ASSIGN_OR_RETURN(void* p, host.Allocate(4096, /*alignment=*/256));
//   ...
//   TS_RETURN_IF_ERROR(host.Free(p));
//
//   // RAII: frees on destruction.
//   TS_ASSIGN_OR_RETURN(auto block, tessera::memory::DeviceAllocation::Create(host, 1 << 20, 256));
//   void* base = block.data();
//
// A back-end hands out raw, aligned memory and takes it back; it does no caching (that is the
// caching allocator's job). Out of memory is absl::ResourceExhausted naming the bytes requested
// and the bytes still available; freeing a pointer the back-end did not hand out is
// absl::InvalidArgument naming the address. Back-ends are not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::memory {

class DeviceMemory {
 public:
  static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

  virtual ~DeviceMemory() = default;

  // `bytes` > 0; `alignment` a power of two (the result is a multiple of it).
  virtual absl::StatusOr<void*> Allocate(int64_t bytes, int64_t alignment) = 0;
  virtual absl::Status Free(void* ptr) = 0;

  virtual absl::string_view name() const = 0;
  // Total bytes this back-end may hand out at once (kUnlimited when there is no budget).
  virtual int64_t capacity() const = 0;
  // Bytes currently handed out (as requested, before any rounding by the back-end).
  virtual int64_t bytes_allocated() const = 0;
};

// Host memory from std::aligned_alloc, with an optional byte budget so that out-of-memory paths
// can be tested on any machine.
class HostMemory : public DeviceMemory {
 public:
  explicit HostMemory(int64_t capacity = kUnlimited);
  ~HostMemory() override;  // frees whatever is still allocated
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  absl::StatusOr<void*> Allocate(int64_t bytes, int64_t alignment) override;
  absl::Status Free(void* ptr) override;

  absl::string_view name() const override { return "host"; }
  int64_t capacity() const override { return capacity_; }
  int64_t bytes_allocated() const override { return bytes_allocated_; }
  int64_t num_allocations() const { return static_cast<int64_t>(sizes_.size()); }

 private:
  int64_t capacity_;
  int64_t bytes_allocated_ = 0;
  std::unordered_map<void*, int64_t> sizes_;
};

// One allocation from a DeviceMemory, freed when this object dies. Move-only.
class DeviceAllocation {
 public:
  static absl::StatusOr<DeviceAllocation> Create(DeviceMemory& memory, int64_t bytes,
                                                 int64_t alignment);
  DeviceAllocation() = default;
  ~DeviceAllocation();
  DeviceAllocation(DeviceAllocation&& other) noexcept;
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  void* data() const { return data_; }
  int64_t size() const { return size_; }
  // Frees now (a no-op when empty); returns the back-end's status.
  absl::Status Reset();

 private:
  DeviceAllocation(DeviceMemory* memory, void* data, int64_t size)
      : memory_(memory), data_(data), size_(size) {}
  DeviceMemory* memory_ = nullptr;
  void* data_ = nullptr;
  int64_t size_ = 0;
};

// InvalidArgument unless bytes > 0 and alignment is a power of two; `what` names the caller.
absl::Status ValidateAllocationRequest(absl::string_view what, int64_t bytes, int64_t alignment);

}  // namespace tessera::memory
