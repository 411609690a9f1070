#include "tessera/memory/cuda/cuda_memory.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/cuda/cuda_status.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"

namespace tessera::memory {
namespace {

constexpr int64_t kCudaMallocAlignment = 256;  // cudaMalloc's documented minimum

absl::Status CheckCopy(const char* what, int64_t bytes, const DeviceAllocation& device) {
  if (bytes >= 0 && bytes <= device.size()) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(what, " of ", bytes, " bytes: the device allocation ",
                                            "holds ", device.size(), " bytes"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaMemory>> CudaMemory::Create(int device, int64_t capacity) {
  int count = 0;
  TS_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA memory: device ", device, " does not exist; this machine has ", count,
        " CUDA device(s)"));
  }
  if (capacity <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA memory: capacity ", base::HumanBytesExact(capacity),
                     " must be positive"));
  }
  return std::unique_ptr<CudaMemory>(new CudaMemory(device, capacity));
}

CudaMemory::~CudaMemory() {
  if (blocks_.empty()) return;
  if (cudaSetDevice(device_) != cudaSuccess) return;  // the context is gone: nothing to free
  for (auto& [ptr, block] : blocks_) cudaFree(block.base);
}

absl::StatusOr<void*> CudaMemory::Allocate(int64_t bytes, int64_t alignment) {
  TS_RETURN_IF_ERROR(ValidateAllocationRequest("CUDA memory", bytes, alignment));
  const int64_t available = capacity_ - bytes_allocated_;
  if (bytes > available) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "CUDA memory (device ", device_, "): out of memory allocating ",
        base::HumanBytesExact(bytes), "; ", base::HumanBytesExact(available),
        " available of a capacity of ", base::HumanBytesExact(capacity_)));
  }
  const int64_t extra = alignment > kCudaMallocAlignment ? alignment - 1 : 0;
  TS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  void* base = nullptr;
  const cudaError_t code = cudaMalloc(&base, static_cast<size_t>(bytes + extra));
  if (code == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so later calls succeed
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    return absl::ResourceExhaustedError(absl::StrCat(
        "CUDA memory (device ", device_, "): cudaMalloc of ", base::HumanBytesExact(bytes + extra),
        " failed; the device has ", base::HumanBytesExact(static_cast<int64_t>(free_bytes)),
        " of ", base::HumanBytesExact(static_cast<int64_t>(total_bytes)), " free"));
  }
  TS_RETURN_IF_ERROR(tessera::base::CudaStatus(code, "cudaMalloc"));
  const auto address = reinterpret_cast<uintptr_t>(base);
  const uintptr_t mask = static_cast<uintptr_t>(alignment) - 1;
  void* aligned = reinterpret_cast<void*>((address + mask) & ~mask);
  blocks_.emplace(aligned, Block{base, bytes});
  bytes_allocated_ += bytes;
  return aligned;
}

absl::Status CudaMemory::Free(void* ptr) {
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CUDA memory (device %d): free of %p, which this back-end did not allocate or already "
        "freed",
        device_, ptr));
  }
  const Block block = it->second;
  blocks_.erase(it);
  bytes_allocated_ -= block.bytes;
  TS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  TS_CUDA_RETURN_IF_ERROR(cudaFree(block.base));
  return absl::OkStatus();
}

absl::Status CopyToDevice(const void* host, int64_t bytes, const DeviceAllocation& device) {
  TS_RETURN_IF_ERROR(CheckCopy("copy to the device", bytes, device));
  if (bytes == 0) return absl::OkStatus();
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(device.data(), host, bytes, cudaMemcpyHostToDevice));
  return absl::OkStatus();
}

absl::Status CopyToHost(const DeviceAllocation& device, int64_t bytes, void* host) {
  TS_RETURN_IF_ERROR(CheckCopy("copy to the host", bytes, device));
  if (bytes == 0) return absl::OkStatus();
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(host, device.data(), bytes, cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

}  // namespace tessera::memory
