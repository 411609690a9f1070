// Transient values as planner buffers (one per sharing group), and the live bytes at the peak.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/base/check.h"
#include "tessera/memory/lifetime.h"
#include "tessera/memory/lifetime_impl.h"

namespace tessera::memory {
namespace {

constexpr int64_t kMaxScaledBytes = int64_t{1} << 62;

// Bytes of value v after scaling by its node's factor (rounded up, at most 2^62).
int64_t ScaledBytes(const Value& v, absl::Span<const double> scale_by_node) {
  if (scale_by_node.empty() || v.node < 0) return v.bytes;
  TS_CHECK(v.node < static_cast<int64_t>(scale_by_node.size()))
      << "scale_by_node has " << scale_by_node.size() << " entries; value '" << v.name
      << "' belongs to node " << v.node;
  const double scale = scale_by_node[v.node];
  TS_CHECK(scale >= 0 && std::isfinite(scale)) << "scale " << scale << " of node " << v.node;
  const double bytes = std::ceil(static_cast<double>(v.bytes) * scale);
  return bytes >= static_cast<double>(kMaxScaledBytes) ? kMaxScaledBytes
                                                       : static_cast<int64_t>(bytes);
}

int64_t AlignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// Per value: its group root, the scaled bytes, and whether its group is transient.
struct GroupView {
  std::vector<int64_t> root;
  std::vector<int64_t> scaled;
  std::vector<bool> transient;  // by root
};

GroupView ViewGroups(const TrainingLifetimes& t, absl::Span<const double> scale_by_node) {
  GroupView view;
  view.root = lifetime_internal::GroupRoots(t.values);
  const size_t n = t.values.size();
  view.scaled.resize(n);
  view.transient.assign(n, true);
  for (size_t i = 0; i < n; ++i) {
    view.scaled[i] = ScaledBytes(t.values[i], scale_by_node);
    if (IsPersistent(t.values[i].kind)) view.transient[view.root[i]] = false;
  }
  return view;
}

}  // namespace

namespace lifetime_internal {

std::vector<int64_t> GroupRoots(absl::Span<const Value> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  std::vector<int64_t> root(n, -1);
  std::vector<int64_t> path;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = i;
    path.clear();
    while (root[v] < 0 && values[v].shares_with >= 0) {
      TS_CHECK(values[v].shares_with < n) << "value " << v << " shares with "
                                          << values[v].shares_with;
      TS_CHECK(static_cast<int64_t>(path.size()) <= n) << "shares_with cycle through value " << i;
      path.push_back(v);
      v = values[v].shares_with;
    }
    const int64_t r = root[v] >= 0 ? root[v] : v;
    root[v] = r;
    for (int64_t p : path) root[p] = r;
  }
  return root;
}

}  // namespace lifetime_internal

std::vector<Buffer> TransientBuffers(const TrainingLifetimes& t,
                                     absl::Span<const double> scale_by_node) {
  const GroupView view = ViewGroups(t, scale_by_node);
  const size_t n = t.values.size();
  std::vector<Buffer> by_root(n, Buffer{.start = std::numeric_limits<int64_t>::max()});
  for (size_t i = 0; i < n; ++i) {
    const Value& v = t.values[i];
    Buffer& b = by_root[view.root[i]];
    b.start = std::min(b.start, v.first_step);
    b.end = std::max(b.end, v.last_step + 1);
    b.size = std::max(b.size, view.scaled[i]);
  }
  std::vector<Buffer> buffers;
  for (size_t r = 0; r < n; ++r) {
    if (view.root[r] != static_cast<int64_t>(r) || !view.transient[r] || by_root[r].size <= 0) {
      continue;
    }
    Buffer b = by_root[r];
    b.id = static_cast<int64_t>(r);
    b.size = AlignUp(b.size, t.alignment);
    b.alignment = t.alignment;
    buffers.push_back(b);
  }
  return buffers;
}

PeakReport LiveAtPeak(const TrainingLifetimes& t, absl::Span<const double> scale_by_node) {
  const std::vector<Buffer> buffers = TransientBuffers(t, scale_by_node);
  PeakReport report;
  if (buffers.empty()) return report;
  const BusiestStep busiest = FindBusiestStep(buffers);
  report.step = busiest.step;
  report.live_bytes = busiest.live_bytes;
  // The values live at that step, in groups that have a buffer.
  const GroupView view = ViewGroups(t, scale_by_node);
  std::vector<bool> has_buffer(t.values.size(), false);
  for (const Buffer& b : buffers) has_buffer[b.id] = true;
  for (size_t i = 0; i < t.values.size(); ++i) {
    const Value& v = t.values[i];
    if (!has_buffer[view.root[i]] || view.scaled[i] <= 0) continue;
    if (v.first_step <= report.step && report.step <= v.last_step) {
      report.values.push_back(static_cast<int64_t>(i));
    }
  }
  std::stable_sort(report.values.begin(), report.values.end(), [&](int64_t a, int64_t b) {
    return view.scaled[a] > view.scaled[b];
  });
  return report;
}

}  // namespace tessera::memory
