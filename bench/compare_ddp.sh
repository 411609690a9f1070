#!/usr/bin/env bash
# Hybrid training in Tessera (`tessera train`, thread back-end) against PyTorch's
# DistributedDataParallel (gloo, N processes on localhost): step time and the bytes each worker
# sends per step, same models, global batch, workers, threads and optimizer (docs/benchmarks.md,
# "Against PyTorch DDP").
#
#   bench/compare_ddp.sh --build build-x                  # nmt and ocr, 2 workers, 2 rounds
#   bench/compare_ddp.sh --build build-x --models nmt --strategy auto --workers 2 --rounds 3
#
# Options: --build DIR (holding bin/tessera; default build), --workers N (2), --steps N (timed
# steps per run, median taken; 20), --warmup N (DDP's untimed first steps; 3), --rounds R (2),
# --batch B (global, divides by N; 32), --models "a b" (nmt ocr), --strategy S (Tessera's plan:
# auto|data|model|late|PLAN.json; data), --keep-coretype (see below), --check (exit 1 unless
# every JSON line has its keys and positive figures, and, with --strategy data, the two byte
# counts are equal). TESSERA_TORCH_PYTHON overrides the interpreter (default /usr/bin/python3,
# Debian's, which has torch).
#
# Tessera: `tessera train MODEL --workers N --steps S+W --batch B --strategy S --optimizer sgd
# --lr 0.01 --quiet --report-json F` (plus `--eval-batches 0` when the command has it: the jobs'
# own defaults are Adam at 0.003 and a held-out evaluation), threads per worker its
# default cores / N; read are measured.step_time_s (the slowest worker's median over the steps
# after the first: its warm-up is one step, so it runs S+W steps like DDP) and
# measured.comm_bytes (the payload one device sent in the last step, counted per send). Without
# a local cluster file ($TESSERA_LOCAL_CLUSTER, else $XDG_CONFIG_HOME or ~/.config
# tessera/local.json) `tessera calibrate --quick` runs first.
# DDP: bench/ddp_step_time.py (N spawned ranks, cores / N threads each, B / N samples each,
# default buckets, SGD lr 0.01; the slowest rank's median step; bytes = 2 (P-1)/P x the gradient
# buckets' bytes, gloo's ring). Each round runs, per model, Tessera, then DDP twice: with
# OpenMP's default wait policy and with OMP_WAIT_POLICY=PASSIVE (as bench/compare_pytorch.sh).
# A side's figure is its fastest median over the rounds. Refuses (exit 1) when torch's sgemm is
# not OpenBLAS's; an OPENBLAS_CORETYPE in the environment is dropped unless --keep-coretype, and
# both sides run the OpenBLAS kernels Tessera runs (all as in compare_pytorch.sh). The last lines
# are one JSON object per model, ratio = tessera / ddp:
#   {"model": "nmt", "workers": 2, "tessera_step_s": 0.04, "ddp_step_s": 0.05, "ratio": 0.8,
#    "tessera_comm_bytes": 12526400, "ddp_comm_bytes": 12526400}
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build=$root/build
workers=2
steps=20
warmup=3
rounds=2
batch=32
models="nmt ocr"
strategy=data
keep_coretype=0
check=0
python=${TESSERA_TORCH_PYTHON:-/usr/bin/python3}
lr=0.01  # SGD without momentum on both sides

script_name=compare_ddp.sh
source "$here/compare_lib.sh"

while [[ $# -gt 0 ]]; do
  case $1 in
    --build) need_value "$@"; build=$2; shift 2 ;;
    --workers) need_value "$@"; workers=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --warmup) need_value "$@"; warmup=$2; shift 2 ;;
    --rounds) need_value "$@"; rounds=$2; shift 2 ;;
    --batch) need_value "$@"; batch=$2; shift 2 ;;
    --models) need_value "$@"; models=$2; shift 2 ;;
    --strategy) need_value "$@"; strategy=$2; shift 2 ;;
    --keep-coretype) keep_coretype=1; shift ;;
    --check) check=1; shift ;;
    -h|--help) show_help "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
for n in "$workers" "$steps" "$rounds" "$batch"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive whole number (--workers, --steps, --rounds, --batch)"
done
[[ $warmup =~ ^[0-9]+$ ]] || die "--warmup '$warmup' is not a whole number"
((batch % workers == 0)) || die "--batch $batch does not divide by --workers $workers; pick a multiple"
for model in $models; do
  [[ $model == nmt || $model == ocr ]] || die "unknown model '$model' in --models (nmt, ocr)"
done
[[ -n ${models// /} ]] || die "--models names no model (nmt, ocr)"

bin=$build/bin/tessera
[[ -x $bin ]] || die "$bin not found; build it first:
  cmake -S $root -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target tessera"
"$python" -c 'import torch' 2>/dev/null ||
  die "$python cannot import torch; install Debian's python3-torch (or set TESSERA_TORCH_PYTHON)"

threads=$(($(nproc) / workers))
((threads >= 1)) || threads=1
drop_coretype "$keep_coretype"
same_blas_kernels "$build/bin/tessera-step-time"
OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
  "$python" "$here/torch_step_time.py" --check-blas --threads "$threads" || exit 1

# `tessera train` plans against the local cluster and calibrates it (slowly) when it is missing.
if [[ -n ${TESSERA_LOCAL_CLUSTER:-} ]]; then
  cluster_file=$TESSERA_LOCAL_CLUSTER
elif [[ -n ${XDG_CONFIG_HOME:-} ]]; then
  cluster_file=$XDG_CONFIG_HOME/tessera/local.json
else
  cluster_file=${HOME:-}/.config/tessera/local.json
fi
if [[ ! -f $cluster_file ]]; then
  echo "== no local cluster at $cluster_file: tessera calibrate --quick"
  "$bin" calibrate --quick || die "tessera calibrate --quick failed"
fi
train_extra=()
if "$bin" train --help 2>&1 | grep -q -- '--eval-batches'; then
  train_extra=(--eval-batches 0)
fi

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 1.0) }'; then
  echo "warning: load average $load: other processes share the cores, figures will be noisy" >&2
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');" \
     "$workers workers of $threads threads each"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results
: >"$results"
for ((round = 1; round <= rounds; ++round)); do
  for model in $models; do
    echo "== round $round, $model: Tessera ($bin train, --strategy $strategy)"
    report=$work/report.json
    "$bin" train "$model" --workers "$workers" --steps $((steps + warmup)) --batch "$batch" \
      --strategy "$strategy" --optimizer sgd --lr "$lr" --report-json "$report" --quiet \
      "${train_extra[@]}" ||
      die "tessera train failed for $model"
    "$python" - "$report" "$model" >>"$results" <<'EOF' || die "cannot read $report"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["measured"]
print("tessera " + json.dumps({"model": sys.argv[2], "step_s": m["step_time_s"],
                               "comm_bytes": m["comm_bytes"], "workers": r["workers"],
                               "loss": r["losses"][-1] if r.get("losses") else None}))
EOF
    tail -n 1 "$results"
    for policy in default PASSIVE; do
      echo "== round $round, $model: PyTorch DDP (OMP_WAIT_POLICY $policy)"
      wait_env=()
      [[ $policy == default ]] || wait_env=(OMP_WAIT_POLICY=$policy)
      out=$(env "${wait_env[@]}" "$python" "$here/ddp_step_time.py" --model "$model" \
              --workers "$workers" --threads "$threads" --batch "$batch" --steps "$steps" \
              --warmup "$warmup" --lr "$lr") || die "ddp_step_time.py failed for $model"
      echo "$out"
      echo "ddp $(tail -n 1 <<<"$out")" >>"$results"
    done
  done
done

# Per model and side, the fastest median; the byte counts must not change between runs.
"$python" - "$results" "$workers" "$strategy" "$check" $models <<'EOF'
import json, sys
results, workers, strategy, check = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
models = sys.argv[5:]
runs = {}
for line in open(results):
    side, text = line.split(" ", 1)
    r = json.loads(text)
    runs.setdefault((r["model"], side), []).append(r)
lines, problems = [], []
for model in models:
    t = min(runs[(model, "tessera")], key=lambda r: r["step_s"])
    d = min(runs[(model, "ddp")], key=lambda r: r["step_s"])
    spread = lambda side: ", ".join("%.1f" % (r["step_s"] * 1e3) for r in runs[(model, side)])
    print("%s: step medians (ms): tessera %s; ddp %s" % (model, spread("tessera"), spread("ddp")))
    print("%s: ddp: %d buckets of %d bytes in all per step (gradients %d, buffers %d); fastest "
          "with OMP_WAIT_POLICY %s" % (model, d["buckets"], d["bucket_bytes"], d["grad_bytes"],
                                       d["buffer_bytes"], d["omp_wait_policy"]))
    for side in ("tessera", "ddp"):
        counts = {r["comm_bytes"] for r in runs[(model, side)]}
        if len(counts) != 1:
            problems.append("%s: %s's bytes differ between runs: %s" % (model, side, sorted(counts)))
    out = {"model": model, "workers": workers, "tessera_step_s": t["step_s"],
           "ddp_step_s": d["step_s"], "ratio": round(t["step_s"] / d["step_s"], 3),
           "tessera_comm_bytes": t["comm_bytes"], "ddp_comm_bytes": d["comm_bytes"]}
    lines.append(json.dumps(out))
    if check:
        for key in ("tessera_step_s", "ddp_step_s", "ratio", "tessera_comm_bytes",
                    "ddp_comm_bytes"):
            if not isinstance(out[key], (int, float)) or not out[key] > 0:
                problems.append("%s: %s is %r, not a positive number" % (model, key, out[key]))
        if strategy == "data" and out["tessera_comm_bytes"] != out["ddp_comm_bytes"]:
            problems.append("%s: the data plan's bytes differ: tessera %d, ddp %d per device "
                            "per step (both should be 2 (P-1)/P x the gradient bytes, %d x "
                            "2 (P-1)/P)" % (model, out["tessera_comm_bytes"],
                                            out["ddp_comm_bytes"], d["grad_bytes"]))
if check and not problems:
    print("check ok: %d model(s), keys and positive figures%s" % (
        len(models), ", equal bytes (data plan)" if strategy == "data" else ""))
print("\n".join(lines))
for p in problems:
    print("compare_ddp.sh: " + p, file=sys.stderr)
sys.exit(1 if problems and check else 0)
EOF
