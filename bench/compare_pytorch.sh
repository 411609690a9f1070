#!/usr/bin/env bash
# Training-step time of a CPU-sized CRNN and seq2seq LSTM in Tessera and in PyTorch (Debian's
# python3-torch), same model, batch, threads and optimizer (SGD), in one run (docs/benchmarks.md).
#
#   bench/compare_pytorch.sh                       # build/bin/tessera-step-time, 3 rounds
#   bench/compare_pytorch.sh --build build-x --steps 30 --rounds 5 --profile
#
# Options: --build DIR (holding bin/tessera-step-time; default build), --steps N (timed steps per
# run, median taken; 20), --warmup N (3), --rounds R (3), --threads N (2), --batch B (32),
# --models "a b" (crnn_small seq2seq_small), --profile (per-op tables of both sides),
# --keep-coretype (see below). TESSERA_TORCH_PYTHON overrides the interpreter (default
# /usr/bin/python3, Debian's, which has torch).
#
# Each round runs, per model, Tessera first, then torch twice: with OpenMP's default wait policy
# and with OMP_WAIT_POLICY=PASSIVE (Debian's torch runs element-wise ops on OpenMP threads and
# matrix products on OpenBLAS's own pthreads; OpenMP threads spinning after each parallel region
# take the two cores from OpenBLAS's, 2-3x slower steps on this machine). A side's figure is its
# fastest median over the rounds (and, for torch, the policies): on a shared machine a burst of
# other work only ever slows a run down.
# Refuses (exit 1) when torch's sgemm is not OpenBLAS's: with the reference BLAS it multiplies at
# ~5 GFLOP/s and the comparison would flatter Tessera. Both sides share one OpenBLAS; an
# OPENBLAS_CORETYPE in the environment is dropped unless --keep-coretype: forcing Haswell kernels
# on an AVX-512 CPU halves sgemm (107 against 202 GFLOP/s at 2048 here), and the peer must run at
# its best; unset, both run the kernels Tessera runs (OpenBLAS's own pick, or the AVX-512/AVX2
# kernels Tessera switches an OpenBLAS to that does not know the CPU). The last lines are one
# JSON object per model, ratio = tessera / torch:
#   {"model": "crnn_small", "tessera_step_s": 0.1, "torch_step_s": 0.2, "ratio": 0.5}
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build=$root/build
steps=20
warmup=3
rounds=3
threads=2
batch=32
models="crnn_small seq2seq_small"
profile=()
keep_coretype=0
python=${TESSERA_TORCH_PYTHON:-/usr/bin/python3}

script_name=compare_pytorch.sh
source "$here/compare_lib.sh"

while [[ $# -gt 0 ]]; do
  case $1 in
    --build) need_value "$@"; build=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --warmup) need_value "$@"; warmup=$2; shift 2 ;;
    --rounds) need_value "$@"; rounds=$2; shift 2 ;;
    --threads) need_value "$@"; threads=$2; shift 2 ;;
    --batch) need_value "$@"; batch=$2; shift 2 ;;
    --models) need_value "$@"; models=$2; shift 2 ;;
    --profile) profile=(--profile); shift ;;
    --keep-coretype) keep_coretype=1; shift ;;
    -h|--help) show_help "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
for n in "$steps" "$rounds" "$threads" "$batch"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive whole number (--steps, --rounds, --threads, --batch)"
done
[[ $warmup =~ ^[0-9]+$ ]] || die "--warmup '$warmup' is not a whole number"
for model in $models; do
  [[ $model == crnn_small || $model == seq2seq_small ]] ||
    die "unknown model '$model' in --models (crnn_small, seq2seq_small)"
done

bin=$build/bin/tessera-step-time
[[ -x $bin ]] || die "$bin not found; build it first:
  cmake -S $root -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target tessera-step-time"
"$python" -c 'import torch' 2>/dev/null ||
  die "$python cannot import torch; install Debian's python3-torch (or set TESSERA_TORCH_PYTHON)"

# Same threads on both sides: torch.set_num_threads (OpenMP) and OpenBLAS's own pool.
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
drop_coretype "$keep_coretype"
same_blas_kernels "$bin"
"$python" "$here/torch_step_time.py" --check-blas --threads "$threads" || exit 1

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 1.0) }'; then
  echo "warning: load average $load: other processes share the cores, figures will be noisy" >&2
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

results=$(mktemp)
trap 'rm -f "$results"' EXIT
common=(--batch "$batch" --threads "$threads" --steps "$steps" --warmup "$warmup")
for ((round = 1; round <= rounds; ++round)); do
  for model in $models; do
    echo "== round $round, $model: Tessera ($bin)"
    out=$("$bin" --model "$model" "${common[@]}" "${profile[@]}") ||
      die "tessera-step-time failed for $model"
    echo "$out"
    echo "tessera $(tail -n 1 <<<"$out")" >>"$results"
    for policy in default PASSIVE; do
      echo "== round $round, $model: PyTorch (OMP_WAIT_POLICY $policy)"
      wait_env=()
      [[ $policy == default ]] || wait_env=(OMP_WAIT_POLICY=$policy)
      out=$(env "${wait_env[@]}" "$python" "$here/torch_step_time.py" --model "$model" \
              "${common[@]}" "${profile[@]}") || die "torch_step_time.py failed for $model"
      echo "$out"
      echo "torch $(tail -n 1 <<<"$out")" >>"$results"
    done
  done
done

# Per model and side, the fastest median; the losses of those runs as a sanity check.
"$python" - "$results" $models <<'EOF'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    side, text = line.split(" ", 1)
    r = json.loads(text)
    runs.setdefault((r["model"], side), []).append(r)
lines = []
for model in sys.argv[2:]:
    t = min(runs[(model, "tessera")], key=lambda r: r["step_s"])
    p = min(runs[(model, "torch")], key=lambda r: r["step_s"])
    spread = lambda side: ", ".join("%.1f" % (r["step_s"] * 1e3) for r in runs[(model, side)])
    print("%s: step medians (ms): tessera %s; torch %s" % (model, spread("tessera"), spread("torch")))
    print("%s: loss after %d steps: tessera %.4f, torch %.4f (torch's fastest: OMP_WAIT_POLICY %s)"
          % (model, t["warmup"] + t["steps"], t["loss"], p["loss"], p["omp_wait_policy"]))
    lines.append(json.dumps({"model": model, "tessera_step_s": t["step_s"],
                             "torch_step_s": p["step_s"],
                             "ratio": round(t["step_s"] / p["step_s"], 3)}))
print("\n".join(lines))
EOF
