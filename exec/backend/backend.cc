// The execution seam's shared parts (backend.h): devices by name, the back-end factory, host
// reads and writes of a back-end's arrays.
#include "tessera/exec/backend/backend.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/backend/cpu_backend.h"
#include "tessera/exec/cpu/kernels.h"
#if defined(TESSERA_HAVE_CUDA)
#include "tessera/exec/cuda/backend.h"
#include "tessera/exec/cuda/op_kernels.h"
#endif

namespace tessera::exec {

int UpdateRule::slots() const {
  switch (kind) {
    case costmodel::OptimizerKind::kSgd: return 0;
    case costmodel::OptimizerKind::kMomentum: return 1;
    default: return 2;
  }
}

absl::string_view DeviceName(Device device) { return device == Device::kCuda ? "cuda" : "cpu"; }

absl::StatusOr<Device> ParseDevice(absl::string_view name) {
  for (Device d : {Device::kCpu, Device::kCuda}) {
    if (DeviceName(d) == name) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", name, "'; expected cpu or cuda"));
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options) {
  if (options.device == Device::kCpu) return MakeCpuBackend(options.threads);
#if defined(TESSERA_HAVE_CUDA)
  return cuda::MakeCudaBackend({.device = options.cuda_device, .tf32 = options.tf32});
#else
  return absl::FailedPreconditionError(
      "device cuda: this build of Tessera has no CUDA back-end (nvcc was not found when it was "
      "configured); rebuild where the CUDA toolkit is installed, or use --device cpu");
#endif
}

std::vector<OpCoverage> KernelCoverage() {
  std::vector<OpCoverage> table;
  for (graph::OpKind kind : graph::AllOpKinds()) {
    OpCoverage& row = table.emplace_back(OpCoverage{.kind = kind});
    row.cpu = cpu::HasCpuKernel(kind);
#if defined(TESSERA_HAVE_CUDA)
    row.cuda = cuda::HasCudaKernel(kind);
#endif
  }
  return table;
}

absl::StatusOr<std::vector<float>> ReadFloats(Backend& backend, absl::Span<const float> array) {
  std::vector<float> out(array.size());
  TS_RETURN_IF_ERROR(backend.CopyToHost(out.data(), array.data(), array.size() * sizeof(float)));
  return out;
}

absl::Status WriteFloats(Backend& backend, absl::Span<float> array,
                         absl::Span<const float> values) {
  if (array.size() != values.size()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", values.size(),
                                                   " values to an array of ", array.size()));
  }
  return backend.CopyFromHost(array.data(), values.data(), values.size() * sizeof(float));
}

}  // namespace tessera::exec
