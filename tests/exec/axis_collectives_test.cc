// The axis collectives of the hybrid runtime (exec/axis_collectives.h) against a serial
// reference: every axis of a rank-3 tensor (contiguous blocks sent in place, strided ones
// packed), P = 1..4 thread ranks, with a kept scratch buffer and without.
#include "tessera/exec/axis_collectives.h"

#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/exec/rank_plan.h"

namespace tessera::exec {
namespace {

// The whole tensor of `shape` as rank `rank` sees it: distinct values per (rank, element).
std::vector<float> Whole(const graph::Shape& shape, int rank) {
  std::vector<float> v(graph::NumElements(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rank * 100000 + i);
  return v;
}

graph::Shape Times(graph::Shape shape, int axis, int64_t f) {
  shape[axis] *= f;
  return shape;
}

absl::Status Expect(const std::vector<float>& got, const std::vector<float>& want,
                    const std::string& what) {
  if (got == want) return absl::OkStatus();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return absl::InternalError(absl::StrCat(what, ": element ", i, " is ", got[i],
                                              ", expected ", want[i]));
    }
  }
  return absl::InternalError(absl::StrCat(what, ": sizes differ"));
}

class AxisCollectivesTest : public ::testing::TestWithParam<int> {};

// Rank r's block along `axis` is block r of rank 0's whole tensor: all-gather rebuilds it.
TEST_P(AxisCollectivesTest, AllGatherRebuildsTheWholeAlongEveryAxis) {
  const int p = GetParam();
  const absl::Status status = comm::RunOnThreads(p, [p](comm::Communicator& c) -> absl::Status {
    std::vector<float> scratch;
    for (int axis = 0; axis < 3; ++axis) {
      const graph::Shape local = {3, 2, 5};
      const graph::Shape whole = Times(local, axis, p);
      const std::vector<float> all = Whole(whole, 0);
      const std::vector<float> mine =
          SliceAxis(all, whole, axis, c.rank() * local[axis], local[axis]);
      for (std::vector<float>* s : {&scratch, static_cast<std::vector<float>*>(nullptr)}) {
        std::vector<float> out(all.size(), -1.f);
        TS_RETURN_IF_ERROR(AllGatherAxis(c, mine.data(), local, axis, out.data(), s));
        TS_RETURN_IF_ERROR(
            Expect(out, all, absl::StrCat("rank ", c.rank(), " all-gather axis ", axis)));
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// Every rank holds a whole tensor of partial sums; rank r gets block r of their sum.
TEST_P(AxisCollectivesTest, ReduceScatterSumsAndKeepsThisRanksBlock) {
  const int p = GetParam();
  const absl::Status status = comm::RunOnThreads(p, [p](comm::Communicator& c) -> absl::Status {
    std::vector<float> scratch;
    for (int axis = 0; axis < 3; ++axis) {
      const graph::Shape whole = Times({2, 3, 4}, axis, p);
      std::vector<float> sum(graph::NumElements(whole), 0.f);
      for (int r = 0; r < p; ++r) {
        const std::vector<float> part = Whole(whole, r);
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
      }
      const int64_t block = whole[axis] / p;
      const std::vector<float> want = SliceAxis(sum, whole, axis, c.rank() * block, block);
      for (std::vector<float>* s : {&scratch, static_cast<std::vector<float>*>(nullptr)}) {
        std::vector<float> out(want.size(), -1.f);
        TS_RETURN_IF_ERROR(ReduceScatterAxis(c, Whole(whole, c.rank()).data(), whole, axis,
                                             out.data(), s));
        TS_RETURN_IF_ERROR(
            Expect(out, want, absl::StrCat("rank ", c.rank(), " reduce-scatter axis ", axis)));
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// Rank r holds column block r of a whole tensor W split along `concat`; after the exchange it
// holds row block r of W split along `split` (and back again).
TEST_P(AxisCollectivesTest, AllToAllMovesBetweenEverySplitAndConcatAxis) {
  const int p = GetParam();
  const absl::Status status = comm::RunOnThreads(p, [p](comm::Communicator& c) -> absl::Status {
    std::vector<float> scratch;
    const int r = c.rank();
    for (int split = 0; split < 3; ++split) {
      for (int concat = 0; concat < 3; ++concat) {
        if (split == concat) continue;
        const graph::Shape whole = Times(Times({2, 3, 2}, split, p), concat, p);
        const std::vector<float> all = Whole(whole, 7);
        const int64_t cb = whole[concat] / p, sb = whole[split] / p;
        const std::vector<float> in = SliceAxis(all, whole, concat, r * cb, cb);
        graph::Shape in_shape = whole;
        in_shape[concat] = cb;
        graph::Shape out_shape = whole;
        out_shape[split] = sb;
        const std::vector<float> want = SliceAxis(all, whole, split, r * sb, sb);
        for (std::vector<float>* s : {&scratch, static_cast<std::vector<float>*>(nullptr)}) {
          const std::string what = absl::StrCat("rank ", r, " all-to-all split ", split,
                                                " concat ", concat);
          std::vector<float> out(want.size(), -1.f), back(in.size(), -1.f);
          TS_RETURN_IF_ERROR(AllToAllAxis(c, in.data(), in_shape, split, concat, out.data(), s));
          TS_RETURN_IF_ERROR(Expect(out, want, what));
          TS_RETURN_IF_ERROR(AllToAllAxis(c, out.data(), out_shape, concat, split, back.data(), s));
          TS_RETURN_IF_ERROR(Expect(back, in, what + " and back"));
        }
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

INSTANTIATE_TEST_SUITE_P(Ranks, AxisCollectivesTest, ::testing::Range(1, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("P", info.param);
                         });

TEST(AxisCollectivesTest, AnAxisThatDoesNotSplitIsAnError) {
  const absl::Status status = comm::RunOnThreads(2, [](comm::Communicator& c) -> absl::Status {
    std::vector<float> in(3 * 4), out(3 * 4);
    const absl::Status s = AllToAllAxis(c, in.data(), {3, 4}, 0, 1, out.data());
    if (s.ok() || !absl::StrContains(s.message(), "does not split into 2")) {
      return absl::InternalError(absl::StrCat("expected a split error, got: ", s.ToString()));
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace tessera::exec
