// Tensor shapes: a list of int64 dimensions, outermost first. Every shape in a
// Tessera graph is static; importers fold whatever computes shapes.
//
//   Shape s = {32, 3, 224, 224};
//   NumElements(s);      // 4816896
//   ShapeString(s);      // "[32,3,224,224]"
//   NormalizeAxis(-1, 4) // 3
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::graph {

using Shape = std::vector<int64_t>;

// Product of the dimensions (1 for a scalar). Saturates at INT64_MAX instead of
// overflowing, so hostile shapes cannot wrap around to small numbers.
int64_t NumElements(const Shape& shape);
std::string ShapeString(const Shape& shape);
// Maps a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
// Numpy-style broadcast of two shapes; nullopt when incompatible.
std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b);

}  // namespace tessera::graph
