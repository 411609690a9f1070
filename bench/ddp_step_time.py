#!/usr/bin/python3
"""PyTorch DDP side of bench/compare_ddp.sh: the training-step time and the bytes each rank sends
when N processes train the CPU-sized seq2seq LSTM (Tessera's `nmt`) or CRNN (`ocr`) with
torch.distributed's gloo back-end on localhost.

  /usr/bin/python3 bench/ddp_step_time.py --model nmt --workers 2 --batch 32 --steps 20 --warmup 3

The models and their data are bench/torch_step_time.py's (the one definition of the PyTorch
peers). N ranks are spawned (torch.multiprocessing), MASTER_ADDR=127.0.0.1 on a free port, each
with --threads (default cores / N) intra-op threads (torch.set_num_threads, OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS), each on its rows of one global batch of --batch samples drawn once from
--seed (per-rank batch = B / N), wrapped in DistributedDataParallel with its default buckets
(25 MB, the first 1 MB) and trained with SGD (no momentum, --lr 0.01; compare_ddp.sh runs
`tessera train --optimizer sgd --lr 0.01` to match).
A step is zero_grad + forward + backward (whose end waits for the gradient all-reduces) + SGD;
the warm-up steps are left out and the figure is the slowest rank's median.

Bytes: a DDP comm hook adds up each gradient bucket's bytes (the fused buffer it is handed),
then calls the default all-reduce (default_hooks.allreduce_hook). gloo all-reduces a CPU buffer
of S bytes with its ring (reduce-scatter, then all-gather: each rank sends P - 1 chunks of S/P
in each), so the payload a rank sends per step is
    comm_bytes = 2 (P - 1) / P x (sum of the step's bucket bytes)     (integer division by P)
which for P = 2 is the gradients' bytes. Not counted: the buffers DDP broadcasts from rank 0
before each forward (broadcast_buffers; the CRNN's BatchNorm statistics, `buffer_bytes`).

The last line printed is one JSON object:
  {"model", "workers", "batch", "threads", "warmup", "steps", "step_s" (slowest rank's median),
   "rank_step_s" (each rank's median), "step_min_s", "bucket_bytes" (per step), "buckets",
   "grad_bytes", "comm_bytes", "buffer_bytes", "loss" (rank 0's, after the timed steps),
   "omp_wait_policy"}
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

import torch_step_time  # noqa: E402  (the models, their data, the BLAS check)

# Tessera's zoo names -> torch_step_time.MODELS
MODELS = {"nmt": "seq2seq_small", "ocr": "crnn_small"}


class ByteCounter:
    """State of the counting comm hook: the buckets and bytes handed to it this step."""

    def __init__(self):
        self.bytes = 0
        self.buckets = 0

    def reset(self):
        self.bytes = 0
        self.buckets = 0


def counting_allreduce_hook(state, bucket):
    buffer = bucket.buffer()
    state.bytes += buffer.numel() * buffer.element_size()
    state.buckets += 1
    return default_hooks.allreduce_hook(None, bucket)  # None: the default (WORLD) group


def ring_bytes(bucket_bytes, ranks):
    """Payload one rank sends in gloo's ring all-reduce of bucket_bytes, averaged over ranks."""
    return 2 * (ranks - 1) * bucket_bytes // ranks


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_shard(data, rank, ranks):
    """This rank's rows of the global batch (every input is batch-first)."""
    local = data[0].shape[0] // ranks
    return tuple(t[rank * local:(rank + 1) * local] for t in data)


def train_rank(model, data, args):
    """(step times after the warm-up, last loss, bucket bytes and buckets per step)."""
    counter = ByteCounter()
    model.register_comm_hook(counter, counting_allreduce_hook)
    sgd = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0)
    times, per_step, loss = [], set(), None
    for i in range(args.warmup + args.steps):
        counter.reset()
        t0 = time.perf_counter()
        sgd.zero_grad(set_to_none=True)
        loss = model(*data)
        loss.backward()  # DDP's end-of-backward callback waits for every bucket's all-reduce
        sgd.step()
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
            per_step.add((counter.bytes, counter.buckets))
    if len(per_step) != 1:
        raise RuntimeError("bucket bytes differ between steps: %s" % sorted(per_step))
    return times, loss.item(), per_step.pop()


def worker(rank, args, port, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=args.workers,
                            timeout=datetime.timedelta(seconds=args.timeout))
    torch.manual_seed(args.seed)
    build, make_data = torch_step_time.MODELS[MODELS[args.model]]
    module = build().train()
    data = make_data(args.batch, torch.Generator().manual_seed(args.seed))
    model = DistributedDataParallel(module)  # default bucket_cap_mb=25, first bucket 1 MB
    times, loss, (bucket_bytes, buckets) = train_rank(model, rank_shard(data, rank, args.workers),
                                                      args)
    mine = {"rank": rank, "step_s": statistics.median(times), "step_min_s": min(times),
            "loss": loss, "bucket_bytes": bucket_bytes, "buckets": buckets,
            "grad_bytes": sum(p.numel() * p.element_size() for p in module.parameters()),
            "buffer_bytes": sum(b.numel() * b.element_size() for b in module.buffers())}
    every = [None] * args.workers
    dist.all_gather_object(every, mine)
    if rank == 0:
        results.put(every)  # SimpleQueue: written to the pipe before put returns
    dist.barrier()
    # Leave without tearing DDP and the process group down: in torch 1.13 the Reducer's
    # destructor joins gloo's work thread while holding the GIL, and that thread may need the
    # GIL to free a hook's bucket tensor (seen: a rank hung at exit, spinning on the store).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def summarize(every, args):
    slowest = max(every, key=lambda r: r["step_s"])
    first = every[0]
    if len({(r["bucket_bytes"], r["buckets"]) for r in every}) != 1:
        raise RuntimeError("ranks handed different buckets to the hook: %s" % every)
    return {"model": args.model, "workers": args.workers, "batch": args.batch,
            "threads": args.threads, "warmup": args.warmup, "steps": args.steps,
            "step_s": slowest["step_s"], "rank_step_s": [r["step_s"] for r in every],
            "step_min_s": min(r["step_min_s"] for r in every),
            "bucket_bytes": first["bucket_bytes"], "buckets": first["buckets"],
            "grad_bytes": first["grad_bytes"],
            "comm_bytes": ring_bytes(first["bucket_bytes"], args.workers),
            "buffer_bytes": first["buffer_bytes"], "loss": first["loss"],
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default")}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), default="nmt")
    p.add_argument("--workers", type=int, default=2, help="DDP ranks (processes)")
    p.add_argument("--batch", type=int, default=32, help="global batch, split evenly")
    p.add_argument("--threads", type=int, default=0, help="threads per rank (default cores/N)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--timeout", type=int, default=300, help="gloo timeout, seconds")
    args = p.parse_args()
    if args.workers < 1 or args.steps < 1 or args.warmup < 0 or args.batch < 1:
        p.error("--workers, --steps and --batch must be positive, --warmup not negative")
    if args.batch % args.workers != 0:
        p.error("--batch %d does not divide by --workers %d; pick a multiple"
                % (args.batch, args.workers))
    if args.threads <= 0:
        args.threads = max(1, (os.cpu_count() or 1) // args.workers)
    return args


def main():
    args = parse_args()
    if not dist.is_available() or not dist.is_gloo_available():
        print("ddp_step_time.py: this torch has no torch.distributed gloo back-end",
              file=sys.stderr)
        return 1
    # The ranks are fresh interpreters: their OpenMP and OpenBLAS pools read these at start-up.
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(worker, args=(args, free_port(), results), nprocs=args.workers, join=True)
    r = summarize(results.get(), args)
    print("%s on %d DDP ranks (%d threads each, OMP_WAIT_POLICY %s): step %.2f ms (slowest "
          "rank's median; ranks %s ms); %d buckets, %d bytes per step (gradients %d); sent per "
          "rank per step %d bytes; loss %.4f" %
          (args.model, args.workers, args.threads, r["omp_wait_policy"], r["step_s"] * 1e3,
           ", ".join("%.2f" % (s * 1e3) for s in r["rank_step_s"]), r["buckets"],
           r["bucket_bytes"], r["grad_bytes"], r["comm_bytes"], r["loss"]))
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
