// Internal to the zoo: one builder function per model (batch >= 1), defined in
// graph/zoo/<model>.cc and registered in zoo.cc.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"

namespace tessera::graph::zoo::internal {

absl::StatusOr<Graph> BuildAlexNet(int64_t batch);
absl::StatusOr<Graph> BuildVgg16(int64_t batch);
absl::StatusOr<Graph> BuildResNet50(int64_t batch);
absl::StatusOr<Graph> BuildGnmt(int64_t batch);
absl::StatusOr<Graph> BuildCrnn(int64_t batch);
absl::StatusOr<Graph> BuildTransformer(int64_t batch);
// The CPU-sized models that train on this machine (nmt_small.cc, ocr_small.cc).
absl::StatusOr<Graph> BuildNmtSmall(int64_t batch);
absl::StatusOr<Graph> BuildOcrSmall(int64_t batch);

}  // namespace tessera::graph::zoo::internal
