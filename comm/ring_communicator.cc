// The ring back-end: header check, then the schedule of ring_plan.cc run by ring_pipeline.cc.
#include "tessera/comm/ring_communicator_impl.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/ring_impl.h"

namespace tessera::comm::internal {
namespace {

RingContext ContextFor(Transport& t, const Call& call, const CommOptions& options) {
  RingContext ctx{t, call};
  ctx.tag = call.sequence % (t.max_tag() + 1);
  ctx.timeout = options.timeout;
  ctx.depth = options.pipeline_depth;
  return ctx;
}

int64_t ChunkElems(const Call& call, int size, const CommOptions& options, int64_t total) {
  return ChooseChunkElements(total, size, DTypeSize(call.dtype), options.chunk_bytes);
}

}  // namespace

RingCommunicator::RingCommunicator(std::unique_ptr<Transport> transport, CommOptions options,
                                   Backend backend, std::function<void()> on_destroy)
    : Communicator(transport->rank(), transport->size(), std::move(options)),
      transport_(std::move(transport)), backend_(backend),
      on_destroy_(std::move(on_destroy)) {}

RingContext RingCommunicator::Context(const Call& call) {
  RingContext ctx = ContextFor(*transport_, call, options());
  ctx.count_sent = [this](int64_t bytes, bool header) { CountSent(bytes, header); };
  return ctx;
}

RingCommunicator::~RingCommunicator() {
  JoinAsyncThreads();
  if (on_destroy_) on_destroy_();
}

absl::Status RingCommunicator::Execute(const Call& call) {
  const absl::Time start = absl::Now();
  absl::Status status = ExecuteCall(call);
  CountBusy(absl::ToDoubleSeconds(absl::Now() - start));
  return status;
}

absl::Status RingCommunicator::ExecuteCall(const Call& call) {
  switch (call.kind) {
    case CallKind::kAllReduce: return AllReduce(call);
    case CallKind::kReduceScatter: return ReduceScatter(call);
    case CallKind::kAllGather: return AllGather(call);
    case CallKind::kBroadcast: return Broadcast(call);
    case CallKind::kSend: return Send(call);
    case CallKind::kRecv: return Recv(call);
    case CallKind::kAllToAll: return AllToAll(call);
    case CallKind::kBarrier: return ExchangeHeaders(Context(call));
  }
  return absl::InternalError("unknown call kind");
}

absl::Status RingCommunicator::AllReduce(const Call& call) {
  const RingContext ctx = Context(call);
  TS_RETURN_IF_ERROR(ExchangeHeaders(ctx));
  const int64_t chunk = ChunkElems(call, size(), options(), call.count);
  const RingPlan plan = AllReducePlan(call.count, size(), rank(), chunk);
  char* data = static_cast<char*>(call.output);
  return RunRingPipeline(ctx, plan, RingBuffers{data, data, data, 0});
}

absl::Status RingCommunicator::ReduceScatter(const Call& call) {
  const RingContext ctx = Context(call);
  TS_RETURN_IF_ERROR(ExchangeHeaders(ctx));
  const int64_t esize = DTypeSize(call.dtype), total = call.count * size();
  if (size() == 1) {
    if (call.count > 0) std::memmove(call.output, call.input, call.count * esize);
    return absl::OkStatus();
  }
  // Partial sums of the other segments pass through `work` (only with 3 or more ranks); my
  // block r is SegmentRange(total, P, r) because total is a multiple of P.
  std::unique_ptr<char[]> work;
  if (size() > 2 && total > 0) work.reset(new char[total * esize]);
  const RingPlan plan =
      ReduceScatterPlan(total, size(), rank(), ChunkElems(call, size(), options(), total));
  const RingBuffers buffers{static_cast<const char*>(call.input), work.get(),
                            static_cast<char*>(call.output), rank() * call.count};
  return RunRingPipeline(ctx, plan, buffers);
}

absl::Status RingCommunicator::AllGather(const Call& call) {
  const RingContext ctx = Context(call);
  TS_RETURN_IF_ERROR(ExchangeHeaders(ctx));
  const int64_t esize = DTypeSize(call.dtype), total = call.count * size();
  char* out = static_cast<char*>(call.output);
  if (call.count > 0) std::memmove(out + rank() * call.count * esize, call.input, call.count * esize);
  const RingPlan plan =
      AllGatherPlan(total, size(), rank(), ChunkElems(call, size(), options(), total));
  return RunRingPipeline(ctx, plan, RingBuffers{out, out, out, 0});
}

absl::Status RingCommunicator::Broadcast(const Call& call) {
  const RingContext ctx = Context(call);
  TS_RETURN_IF_ERROR(ExchangeHeaders(ctx));
  const RingPlan plan = BroadcastPlan(call.count, size(), rank(), call.peer,
                                      ChunkElems(call, size(), options(), call.count * size()));
  char* data = static_cast<char*>(call.output);
  return RunRingPipeline(ctx, plan, RingBuffers{data, data, data, 0});
}

// Pairwise exchange, every message posted at once: receives from each peer straight into its
// output block, sends of each peer's input block (the thread transport copies each block once,
// by whichever side posts second; MPI moves them concurrently). Not a ring: each block goes
// directly to its rank.
absl::Status RingCommunicator::AllToAll(const Call& call) {
  const RingContext ctx = Context(call);
  TS_RETURN_IF_ERROR(ExchangeHeaders(ctx));
  const int p = size(), r = rank();
  const int64_t block = call.count * DTypeSize(call.dtype);
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  std::vector<std::unique_ptr<TransportRequest>> receives(p), sends(p);
  for (int k = 1; k < p; ++k) {
    const int src = (r - k + p) % p;
    receives[src] = transport_->Irecv(src, ctx.lane, ctx.tag, out + src * block, block);
  }
  for (int k = 1; k < p; ++k) {
    const int dst = (r + k) % p;
    sends[dst] = transport_->Isend(dst, ctx.lane, ctx.tag, in + dst * block, block);
    ctx.Sent(block, /*header=*/false);
  }
  if (block > 0) std::memcpy(out + r * block, in + r * block, block);
  for (int k = 1; k < p; ++k) {
    const int src = (r - k + p) % p;
    TS_RETURN_IF_ERROR(WaitFor(ctx, *receives[src], src, false));
  }
  for (int k = 1; k < p; ++k) {
    const int dst = (r + k) % p;
    TS_RETURN_IF_ERROR(WaitFor(ctx, *sends[dst], dst, true));
  }
  return absl::OkStatus();
}

// Point-to-point: a 16-byte header {dtype, count} travels first on the user lane, so a
// receiver that expects another size or dtype says so instead of reading bytes as the wrong type.
namespace {
struct P2PHeader {
  int64_t dtype = 0;
  int64_t count = 0;
};
}  // namespace

absl::Status RingCommunicator::Send(const Call& call) {
  RingContext ctx = Context(call);
  ctx.lane = Lane::kUser;
  ctx.tag = call.tag;
  const P2PHeader header{static_cast<int64_t>(call.dtype), call.count};
  auto head = transport_->Isend(call.peer, ctx.lane, ctx.tag, &header, sizeof(header));
  auto body = transport_->Isend(call.peer, ctx.lane, ctx.tag, call.input,
                                call.count * DTypeSize(call.dtype));
  ctx.Sent(sizeof(header), /*header=*/true);
  ctx.Sent(call.count * DTypeSize(call.dtype), /*header=*/false);
  TS_RETURN_IF_ERROR(WaitFor(ctx, *head, call.peer, true));
  return WaitFor(ctx, *body, call.peer, true);
}

absl::Status RingCommunicator::Recv(const Call& call) {
  RingContext ctx = Context(call);
  ctx.lane = Lane::kUser;
  ctx.tag = call.tag;
  P2PHeader header;
  auto head = transport_->Irecv(call.peer, ctx.lane, ctx.tag, &header, sizeof(header));
  TS_RETURN_IF_ERROR(WaitFor(ctx, *head, call.peer, false));
  const DType sent_dtype = static_cast<DType>(header.dtype);
  if (sent_dtype == call.dtype && header.count == call.count) {
    auto body = transport_->Irecv(call.peer, ctx.lane, ctx.tag, call.output,
                                  call.count * DTypeSize(call.dtype));
    return WaitFor(ctx, *body, call.peer, false);
  }
  // Take the message anyway (the sender is not left waiting), then report.
  const int64_t bytes = IsValidDType(sent_dtype) && header.count >= 0
                            ? header.count * DTypeSize(sent_dtype) : 0;
  std::unique_ptr<char[]> scratch(new char[bytes > 0 ? bytes : 1]);
  auto body = transport_->Irecv(call.peer, ctx.lane, ctx.tag, scratch.get(), bytes);
  WaitFor(ctx, *body, call.peer, false).IgnoreError();
  return absl::InvalidArgumentError(absl::StrCat(
      "rank ", rank(), ": ", Describe(call), ": rank ", call.peer, " sent ", header.count, " ",
      IsValidDType(sent_dtype) ? DTypeName(sent_dtype) : "elements of an unknown dtype",
      "; the receive must name the same count and dtype as the send"));
}

}  // namespace tessera::comm::internal
