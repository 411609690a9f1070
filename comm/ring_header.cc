// Agreement check before every ring collective: each rank sends its call's header to every
// peer, so all ranks see all headers and reach the same verdict (InvalidArgument on a mismatch,
// before any data moves). With every header in, every rank has entered the call: a barrier.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/ring_impl.h"

namespace tessera::comm::internal {
namespace {

struct WireHeader {
  int32_t kind = 0;
  int32_t op = 0;
  int32_t dtype = 0;
  int32_t root = 0;
  int64_t count = 0;
  int64_t sequence = 0;
};
static_assert(sizeof(WireHeader) == 32);

WireHeader HeaderOf(const Call& call) {
  WireHeader h;
  h.kind = static_cast<int32_t>(call.kind);
  const bool reduces = call.kind == CallKind::kAllReduce || call.kind == CallKind::kReduceScatter;
  h.op = reduces ? static_cast<int32_t>(call.op) : 0;
  h.dtype = call.kind == CallKind::kBarrier ? 0 : static_cast<int32_t>(call.dtype);
  h.root = call.kind == CallKind::kBroadcast ? call.peer : 0;
  h.count = call.count;
  h.sequence = call.sequence;
  return h;
}

bool SameHeader(const WireHeader& a, const WireHeader& b) {
  return a.kind == b.kind && a.op == b.op && a.dtype == b.dtype && a.root == b.root &&
         a.count == b.count && a.sequence == b.sequence;
}

std::string Show(int rank, const WireHeader& h) {
  Call c;
  c.kind = static_cast<CallKind>(h.kind);
  c.op = static_cast<ReduceOp>(h.op);
  c.dtype = static_cast<DType>(h.dtype);
  c.count = h.count;
  c.peer = h.root;
  c.sequence = h.sequence;
  const bool known = h.kind >= 0 && h.kind <= static_cast<int32_t>(CallKind::kBarrier) &&
                     IsValidDType(c.dtype) && IsValidReduceOp(c.op);
  return absl::StrCat("rank ", rank, " called ", known ? Describe(c) : "an unknown call");
}

}  // namespace

absl::Status ExchangeHeaders(const RingContext& ctx) {
  Transport& t = ctx.transport;
  const int size = t.size(), rank = t.rank();
  if (size == 1) return absl::OkStatus();
  std::vector<WireHeader> headers(size);
  headers[rank] = HeaderOf(ctx.call);
  std::vector<std::unique_ptr<TransportRequest>> receives(size), sends(size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    receives[peer] = t.Irecv(peer, ctx.lane, ctx.tag, &headers[peer], sizeof(WireHeader));
    sends[peer] = t.Isend(peer, ctx.lane, ctx.tag, &headers[rank], sizeof(WireHeader));
    ctx.Sent(sizeof(WireHeader), /*header=*/true);
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer != rank) TS_RETURN_IF_ERROR(WaitFor(ctx, *receives[peer], peer, false));
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer != rank) TS_RETURN_IF_ERROR(WaitFor(ctx, *sends[peer], peer, true));
  }
  std::vector<std::string> differing;
  for (int peer = 0; peer < size; ++peer) {
    if (!SameHeader(headers[peer], headers[0])) differing.push_back(Show(peer, headers[peer]));
  }
  if (differing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "rank ", rank, ": ranks disagree on a collective: ", Show(0, headers[0]), " but ",
      absl::StrJoin(differing, ", "),
      "; every rank must make the same calls in the same order with the same count, dtype, op "
      "and root. No data was exchanged"));
}

}  // namespace tessera::comm::internal
