// Back-end names and what this build has (backend.h).
#include "tessera/comm/backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/comm/backends_impl.h"

namespace tessera::comm {

namespace {
constexpr Backend kAll[] = {Backend::kThread, Backend::kMpi, Backend::kNccl};
}  // namespace

absl::string_view BackendName(Backend backend) {
  switch (backend) {
    case Backend::kThread: return "thread";
    case Backend::kMpi: return "mpi";
    case Backend::kNccl: return "nccl";
  }
  return "unknown";
}

std::vector<std::string> AllBackendNames() {
  std::vector<std::string> names;
  for (Backend b : kAll) names.emplace_back(BackendName(b));
  return names;
}

absl::StatusOr<Backend> ParseBackend(absl::string_view name) {
  for (Backend b : kAll) {
    if (BackendName(b) == name) return b;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown communication back-end '", name,
                                                 "'; expected one of ",
                                                 absl::StrJoin(AllBackendNames(), ", ")));
}

std::vector<Backend> CompiledBackends() {
  std::vector<Backend> out = {Backend::kThread};
  if (internal::MpiCompiled()) out.push_back(Backend::kMpi);
  if (internal::NcclCompiled()) out.push_back(Backend::kNccl);
  return out;
}

}  // namespace tessera::comm
