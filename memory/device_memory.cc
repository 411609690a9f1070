#include "tessera/memory/device_memory.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/check.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"

namespace tessera::memory {

absl::Status ValidateAllocationRequest(absl::string_view what, int64_t bytes, int64_t alignment) {
  if (bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": cannot allocate ", base::HumanBytesExact(bytes),
                     "; ask for at least 1 byte"));
  }
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": alignment ", alignment, " is not a power of two (request of ",
        base::HumanBytesExact(bytes), ")"));
  }
  return absl::OkStatus();
}

HostMemory::HostMemory(int64_t capacity) : capacity_(capacity) {}

HostMemory::~HostMemory() {
  for (auto& [ptr, size] : sizes_) std::free(ptr);
}

absl::StatusOr<void*> HostMemory::Allocate(int64_t bytes, int64_t alignment) {
  TS_RETURN_IF_ERROR(ValidateAllocationRequest("host memory", bytes, alignment));
  const int64_t available = capacity_ - bytes_allocated_;
  if (bytes > available) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "host memory: out of memory allocating ", base::HumanBytesExact(bytes), "; ",
        base::HumanBytesExact(available), " available of a capacity of ",
        base::HumanBytesExact(capacity_), " (", base::HumanBytesExact(bytes_allocated_),
        " in use)"));
  }
  // std::aligned_alloc wants the size to be a multiple of the alignment.
  const int64_t align = std::max<int64_t>(alignment, alignof(std::max_align_t));
  const int64_t rounded = (bytes + align - 1) / align * align;
  void* ptr = std::aligned_alloc(static_cast<size_t>(align), static_cast<size_t>(rounded));
  if (ptr == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "host memory: the system refused ", base::HumanBytesExact(bytes), " (aligned to ",
        alignment, "); free memory or lower the request"));
  }
  sizes_.emplace(ptr, bytes);
  bytes_allocated_ += bytes;
  return ptr;
}

absl::Status HostMemory::Free(void* ptr) {
  auto it = sizes_.find(ptr);
  if (it == sizes_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "host memory: free of %p, which this back-end did not allocate or already freed", ptr));
  }
  bytes_allocated_ -= it->second;
  sizes_.erase(it);
  std::free(ptr);
  return absl::OkStatus();
}

absl::StatusOr<DeviceAllocation> DeviceAllocation::Create(DeviceMemory& memory, int64_t bytes,
                                                          int64_t alignment) {
  TS_ASSIGN_OR_RETURN(void* data, memory.Allocate(bytes, alignment));
  return DeviceAllocation(&memory, data, bytes);
}

DeviceAllocation::~DeviceAllocation() {
  absl::Status status = Reset();
  TS_CHECK(status.ok()) << status;
}

DeviceAllocation::DeviceAllocation(DeviceAllocation&& other) noexcept
    : memory_(std::exchange(other.memory_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& other) noexcept {
  if (this != &other) {
    absl::Status status = Reset();
    TS_CHECK(status.ok()) << status;
    memory_ = std::exchange(other.memory_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

absl::Status DeviceAllocation::Reset() {
  if (data_ == nullptr) return absl::OkStatus();
  void* data = std::exchange(data_, nullptr);
  size_ = 0;
  return memory_->Free(data);
}

}  // namespace tessera::memory
