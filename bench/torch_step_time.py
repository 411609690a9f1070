#!/usr/bin/python3
"""PyTorch side of bench/compare_pytorch.sh: the median training-step time of the CPU-sized CRNN
and seq2seq LSTM that bench/step_time.cc (tessera-step-time) builds in Tessera.

  /usr/bin/python3 bench/torch_step_time.py --model crnn_small --steps 20 --warmup 3 --threads 2
  /usr/bin/python3 bench/torch_step_time.py --check-blas    # exit 1 unless torch uses OpenBLAS
  /usr/bin/python3 bench/torch_step_time.py --model seq2seq_small --profile   # torch's op table
  python3 bench/torch_step_time.py --model crnn_small --device cuda [--compile]  # on GPU 0

A step is zero_grad + forward + backward + SGD (no momentum) on one random batch drawn once per
run from --seed; on a GPU each step ends with torch.cuda.synchronize(), and --compile runs the
step as torch.compile(mode="reduce-overhead") (CUDA graphs). TF32 is off unless --tf32. The last
line printed is one JSON object:
  {"model", "batch", "threads", "warmup", "steps", "step_s" (median), "step_min_s", "loss"
   (after the timed steps), "params", "blas", "omp_wait_policy", "device", "mode", "tf32"}
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch
from torch import nn

# ----- BLAS check --------------------------------------------------------------------------------


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def sgemm_provider():
    """The file whose sgemm_ torch's libtorch_cpu calls (resolved like the dynamic linker does
    from that library), or None when torch has no separate libtorch_cpu."""
    a = torch.randn(64, 64)
    (a @ a).sum().item()
    with open("/proc/self/maps") as maps:
        paths = [line.split()[-1] for line in maps if "libtorch_cpu" in line]
    if not paths:
        return None
    try:
        sgemm = ctypes.cast(ctypes.CDLL(paths[0]).sgemm_, ctypes.c_void_p)
    except AttributeError:
        return None
    info = _DlInfo()
    if ctypes.CDLL(None).dladdr(sgemm, ctypes.byref(info)) == 0 or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


def sgemm_gflops(n=1024, reps=5):
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9


def check_blas():
    """(ok, description): ok when the sgemm torch calls is OpenBLAS's (another BLAS mapped
    beside it, e.g. the reference libblas before OpenBLAS's liblapack, does not count)."""
    provider = sgemm_provider()
    ok = provider is not None and "openblas" in provider.lower()
    desc = "sgemm from %s (sgemm 1024: %.0f GFLOP/s on %d threads)" % (
        provider or "an unknown library", sgemm_gflops(), torch.get_num_threads())
    return ok, desc


# ----- the CPU-sized models (same as bench/step_time.cc) ----------------------------------------

CRNN_CLASSES, CRNN_MAX_LABEL, CRNN_HIDDEN = 37, 10, 128
ZOO_CRNN_CLASSES, ZOO_CRNN_MAX_LABEL = 37, 25
GNMT_VOCAB, GNMT_LEN = 32320, 50
VOCAB, EMBED, S2S_HIDDEN, SRC_LEN, TGT_LEN = 2000, 128, 256, 20, 20


def conv_relu(cin, cout, kernel=3, padding=1, batch_norm=False):
    layers = [nn.Conv2d(cin, cout, kernel, 1, padding)]
    if batch_norm:
        layers.append(nn.BatchNorm2d(cout))
    return layers + [nn.ReLU()]


class BiLstm(nn.Module):
    """A bi-LSTM and a Linear on every frame: [T, B, I] -> [T, B, out]."""

    def __init__(self, cin, out, hidden=CRNN_HIDDEN):
        super().__init__()
        self.lstm = nn.LSTM(cin, hidden, bidirectional=True)
        self.linear = nn.Linear(2 * hidden, out)

    def forward(self, x):
        h, _ = self.lstm(x)
        t, b, _ = h.shape
        return self.linear(h.reshape(t * b, -1)).reshape(t, b, -1)


class CrnnSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(
            *conv_relu(1, 32), nn.MaxPool2d(2),                        # 32 x 16 x 64
            *conv_relu(32, 64), nn.MaxPool2d(2),                       # 64 x 8 x 32
            *conv_relu(64, 128, batch_norm=True), nn.MaxPool2d((2, 1), (2, 1)),    # 128 x 4 x 32
            *conv_relu(128, 128, batch_norm=True), nn.MaxPool2d((2, 1), (2, 1)),  # 128 x 2 x 32
            *conv_relu(128, 128, (2, 1), 0))                           # 128 x 1 x 32
        self.rnn0 = BiLstm(128, CRNN_HIDDEN)
        self.rnn1 = BiLstm(CRNN_HIDDEN, CRNN_CLASSES)
        self.ctc = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)

    def forward(self, images, targets, input_lengths, target_lengths):
        seq = self.cnn(images).squeeze(2).permute(2, 0, 1)  # [T, B, 128]
        log_probs = self.rnn1(self.rnn0(seq)).log_softmax(-1)
        return self.ctc(log_probs, targets, input_lengths, target_lengths)


class Seq2SeqSmall(nn.Module):
    """Encoder bi-LSTM + LSTM; decoder LSTM from the encoder's final (h, c), scaled dot-product
    attention over the encoder, tanh(Linear [dec; context]), classifier; <pad> (0) ignored."""

    def __init__(self):
        super().__init__()
        self.src_embedding = nn.Embedding(VOCAB, EMBED)
        self.encoder0 = nn.LSTM(EMBED, S2S_HIDDEN, bidirectional=True)
        self.encoder1 = nn.LSTM(2 * S2S_HIDDEN, S2S_HIDDEN)
        self.tgt_embedding = nn.Embedding(VOCAB, EMBED)
        self.decoder = nn.LSTM(EMBED, S2S_HIDDEN)
        self.combine = nn.Linear(2 * S2S_HIDDEN, S2S_HIDDEN)
        self.classifier = nn.Linear(S2S_HIDDEN, VOCAB)
        self.loss = nn.CrossEntropyLoss(ignore_index=0)

    def forward(self, src, tgt, labels):
        both, _ = self.encoder0(self.src_embedding(src.t()))
        enc, (h, c) = self.encoder1(both)
        dec, _ = self.decoder(self.tgt_embedding(tgt.t()), (h, c))
        query = dec.transpose(0, 1) * (1.0 / S2S_HIDDEN ** 0.5)          # [B, T, H]
        values = enc.transpose(0, 1)                                      # [B, S, H]
        weights = torch.softmax(query @ values.transpose(1, 2), dim=-1)   # [B, T, S]
        context = (weights @ values).transpose(0, 1)                      # [T, B, H]
        both = torch.cat([dec, context], dim=2).reshape(-1, 2 * S2S_HIDDEN)
        logits = self.classifier(torch.tanh(self.combine(both)))
        return self.loss(logits, labels.t().reshape(-1))


def ctc_data(batch, gen, width=128, frames=32, classes=CRNN_CLASSES, max_label=CRNN_MAX_LABEL):
    """Images N(0, 1) 32 high; targets of 5 to max_label non-blank classes; every image as wide
    as the frames the CNN leaves."""
    images = torch.randn(batch, 1, 32, width, generator=gen)
    targets = torch.randint(1, classes, (batch, max_label), generator=gen)
    input_lengths = torch.full((batch,), frames, dtype=torch.long)
    target_lengths = torch.randint(5, max_label + 1, (batch,), generator=gen)
    return images, targets, input_lengths, target_lengths


def seq2seq_data(batch, gen):
    return tuple(torch.randint(0, VOCAB, (batch, n), generator=gen)
                 for n in (SRC_LEN, TGT_LEN, TGT_LEN))


# ----- the zoo's full-size models (graph/zoo/crnn.cc, gnmt.cc), for the GPU benchmark ----------

class Crnn(nn.Module):
    """zoo:crnn, Shi, Bai & Yao's CRNN: 8,330,789 parameters, 1x32x100 images, 26 frames."""

    def __init__(self):
        super().__init__()
        tall = nn.MaxPool2d(2, (2, 1), (0, 1))  # the paper's "1x2" pooling
        self.cnn = nn.Sequential(
            *conv_relu(1, 64), nn.MaxPool2d(2), *conv_relu(64, 128), nn.MaxPool2d(2),
            *conv_relu(128, 256), *conv_relu(256, 256), tall,
            *conv_relu(256, 512, batch_norm=True), *conv_relu(512, 512, batch_norm=True),
            nn.MaxPool2d(2, (2, 1), (0, 1)), *conv_relu(512, 512, 2, 0))
        self.rnn0 = BiLstm(512, 256, hidden=256)
        self.rnn1 = BiLstm(256, ZOO_CRNN_CLASSES, hidden=256)
        self.ctc = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)

    def forward(self, images, targets, input_lengths, target_lengths):
        seq = self.cnn(images).squeeze(2).permute(2, 0, 1)  # [26, B, 512]
        log_probs = self.rnn1(self.rnn0(seq)).log_softmax(-1)
        return self.ctc(log_probs, targets, input_lengths, target_lengths)


class BahdanauAttention(nn.Module):
    """Normalized Bahdanau attention as in zoo:gnmt (MLPerf's rnn_translator)."""

    def __init__(self, h):
        super().__init__()
        self.linear_q = nn.Linear(h, h, bias=False)
        self.linear_k = nn.Linear(h, h, bias=False)
        self.linear_att = nn.Parameter(torch.empty(h).uniform_(-0.1, 0.1))
        self.normalize_scalar = nn.Parameter(torch.tensor([1.0 / h ** 0.5]))
        self.normalize_bias = nn.Parameter(torch.zeros(h))

    def forward(self, query, keys):  # [Tq, B, H], [Tk, B, H] -> [Tq, B, H]
        q, k = query.transpose(0, 1), keys.transpose(0, 1)
        s = self.linear_q(q).unsqueeze(2) + self.linear_k(k).unsqueeze(1) + self.normalize_bias
        att = self.linear_att / self.linear_att.norm() * self.normalize_scalar
        scores = torch.softmax(torch.tanh(s) @ att, dim=-1)  # [B, Tq, Tk]
        return (scores @ k).transpose(0, 1)


class Gnmt(nn.Module):
    """zoo:gnmt, GNMT v2 (MLPerf): 160,671,297 parameters, one shared embedding, dropout 0.2."""

    def __init__(self, h=1024, vocab=GNMT_VOCAB):
        super().__init__()
        self.embedder = nn.Embedding(vocab, h)
        self.enc = nn.ModuleList([nn.LSTM(h, h, bidirectional=True), nn.LSTM(2 * h, h),
                                  nn.LSTM(h, h), nn.LSTM(h, h)])
        self.att_rnn = nn.LSTM(h, h)
        self.attn = BahdanauAttention(h)
        self.dec = nn.ModuleList([nn.LSTM(2 * h, h) for _ in range(3)])
        self.classifier = nn.Linear(h, vocab)
        self.drop = nn.Dropout(0.2)
        self.loss = nn.CrossEntropyLoss()

    def forward(self, src, tgt, labels):
        x = self.embedder(src.t())
        for i, lstm in enumerate(self.enc):
            y, _ = lstm(self.drop(x))
            x = y + x if i >= 2 else y
        context = x
        x, _ = self.att_rnn(self.embedder(tgt.t()))
        attn = self.attn(x, context)
        for i, lstm in enumerate(self.dec):
            y, _ = lstm(torch.cat([self.drop(x), attn], dim=2))
            x = y + x if i > 0 else y
        logits = self.classifier(x.reshape(-1, x.shape[-1]))
        return self.loss(logits, labels.t().reshape(-1))


def zoo_crnn_data(batch, gen):
    return ctc_data(batch, gen, width=100, frames=26, classes=ZOO_CRNN_CLASSES,
                    max_label=ZOO_CRNN_MAX_LABEL)


def gnmt_data(batch, gen):
    return tuple(torch.randint(0, GNMT_VOCAB, (batch, GNMT_LEN), generator=gen) for _ in range(3))


MODELS = {"crnn_small": (CrnnSmall, ctc_data), "seq2seq_small": (Seq2SeqSmall, seq2seq_data),
          "crnn": (Crnn, zoo_crnn_data), "gnmt": (Gnmt, gnmt_data)}

# ----- timing ------------------------------------------------------------------------------------


def time_steps(model, data, args):
    sgd = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0)
    cuda = args.device == "cuda"

    def step():
        sgd.zero_grad(set_to_none=True)
        loss = model(*data)
        loss.backward()
        sgd.step()
        return loss

    if args.compile:
        step = torch.compile(step, mode="reduce-overhead")
    times, loss = [], None
    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        loss = step()
        if cuda:
            torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
    return times, loss.item()


def profile(model, data, args):
    sgd = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(args.steps):
            sgd.zero_grad(set_to_none=True)
            model(*data).backward()
            sgd.step()
    print("torch profile of %s over %d steps (totals, not per step):" % (args.model, args.steps))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), default="crnn_small")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--profile", action="store_true", help="print torch's op table too")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--compile", action="store_true",
                   help='torch.compile(mode="reduce-overhead") around the step (CUDA graphs)')
    p.add_argument("--tf32", action="store_true", help="cuda: allow TF32 in matmul and cuDNN")
    p.add_argument("--count-params", action="store_true",
                   help="only print the model's parameter count (what Tessera's copy must have)")
    p.add_argument("--check-blas", action="store_true",
                   help="only check that torch uses OpenBLAS (exit 1 if not)")
    args = p.parse_args()
    if args.count_params:
        model = MODELS[args.model][0]()
        print(json.dumps({"model": args.model,
                          "params": sum(p.numel() for p in model.parameters())}))
        return 0
    torch.set_num_threads(args.threads)
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("torch_step_time.py: --device cuda, but torch sees no GPU", file=sys.stderr)
            return 1
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
        ok, blas = True, "cuBLAS"
    else:
        ok, blas = check_blas()
    if args.check_blas or not ok:
        if not ok:
            print("torch_step_time.py: torch is not using OpenBLAS: %s. Install "
                  "libopenblas0-pthread and point the libblas.so.3 alternative at it "
                  "(update-alternatives --config libblas.so.3-x86_64-linux-gnu); refusing to "
                  "compare against another BLAS." % blas, file=sys.stderr)
            return 1
        print("torch %s uses %s" % (torch.__version__, blas))
        return 0
    torch.manual_seed(args.seed)
    build, make_data = MODELS[args.model]
    model = build().train().to(args.device)
    data = tuple(t.to(args.device)
                 for t in make_data(args.batch, torch.Generator().manual_seed(args.seed)))
    times, loss = time_steps(model, data, args)
    step = statistics.median(times)
    print("%s: loss %.4f after %d steps; step %.2f ms (median)" %
          (args.model, loss, args.warmup + args.steps, step * 1e3))
    if args.profile:
        profile(model, data, args)
    print(json.dumps({"model": args.model, "batch": args.batch, "threads": torch.get_num_threads(),
                      "warmup": args.warmup, "steps": args.steps, "step_s": step,
                      "step_min_s": min(times), "loss": loss,
                      "params": sum(p.numel() for p in model.parameters()), "blas": blas,
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default"),
                      "device": args.device, "mode": "compile" if args.compile else "eager",
                      "tf32": args.tf32}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
