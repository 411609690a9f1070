#!/usr/bin/env bash
# Training-step time on one GPU: the CPU-sized CRNN and seq2seq LSTM of bench/compare_pytorch.sh
# (batch 32 and 256) and the zoo's full-size CRNN and GNMT in Tessera (`tessera-step-time --device cuda`), in PyTorch eager and in PyTorch with
# torch.compile(mode="reduce-overhead") (CUDA graphs), same model, batch, data and optimizer
# (SGD), in one run (docs/gpu.md).
#
#   bench/compare_pytorch_gpu.sh                     # build/bin/tessera-step-time, batch 32 and 256
#   bench/compare_pytorch_gpu.sh --bin DIR --steps 50 --batches "32" --tf32
#
# Options: --bin DIR (holding tessera-step-time; default build/bin), --steps N (timed steps,
# median taken; 30), --warmup N (5; torch.compile's capture happens there), --batches "a b"
# ("32 256"), --models "a b" (crnn_small seq2seq_small), --zoo "model:batch ..." ("crnn:128
# gnmt:32"; "" for none), --tf32 (all three sides allow TF32;
# default: exact float32 everywhere). PYTHON names the interpreter whose torch has CUDA
# (python3). Exit 1 when a side fails to run; a torch.compile that fails is reported as null
# with its error and does not fail the run.
#
# After each model and batch, one JSON line (so a run cut short keeps what it measured), ratios =
# tessera / torch:
#   {"model": "crnn_small", "batch": 32, "math": "fp32", "tessera_step_s": ..,
#    "torch_eager_step_s": .., "torch_compile_step_s": .., "ratio_eager": ..,
#    "ratio_compile": ..}
# zoo:gnmt's loss is NaN after its first update at batch 4 and more (an open autodiff bug in its
# attention vector's gradient, docs/benchmarks.md): its times are of the right work, its loss is not.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
bin=$root/build/bin
steps=30
warmup=5
batches="32 256"
models="crnn_small seq2seq_small"
zoo="crnn:128 gnmt:32"
tf32=()
python=${PYTHON:-python3}

script_name=compare_pytorch_gpu.sh
source "$here/compare_lib.sh"

while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) need_value "$@"; bin=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --warmup) need_value "$@"; warmup=$2; shift 2 ;;
    --batches) need_value "$@"; batches=$2; shift 2 ;;
    --models) need_value "$@"; models=$2; shift 2 ;;
    --zoo) [[ $# -ge 2 ]] || die "--zoo needs a value (see --help)"; zoo=$2; shift 2 ;;
    --tf32) tf32=(--tf32); shift ;;
    -h|--help) show_help "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
for n in "$steps" "$warmup" $batches; do
  [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number (--steps, --warmup, --batches)"
done
[[ -x $bin/tessera-step-time ]] || die "no $bin/tessera-step-time: build it (CUDA build) or pass --bin"

# The step_s of the last JSON line of a run's output, or "null".
step_of() { "$python" -c 'import json,sys
lines=[l for l in sys.stdin.read().splitlines() if l.startswith("{")]
print(json.loads(lines[-1])["step_s"] if lines else "null")'; }

runs=()
for model in $models; do
  for batch in $batches; do runs+=("$model:$batch"); done
done
for pair in $zoo; do
  [[ $pair =~ ^(crnn|gnmt):[1-9][0-9]*$ ]] || die "--zoo takes crnn:B or gnmt:B, not '$pair'"
  runs+=("$pair")
done
for run in "${runs[@]}"; do
  model=${run%%:*} batch=${run##*:}
  common=(--model "$model" --batch "$batch" --steps "$steps" --warmup "$warmup" "${tf32[@]}")
  echo "== $model, batch $batch"
  t_out=$("$bin/tessera-step-time" "${common[@]}" --device cuda) ||
    die "tessera-step-time failed for $model batch $batch: $t_out"
  echo "$t_out" | tail -2 | head -1
  e_out=$("$python" "$here/torch_step_time.py" "${common[@]}" --device cuda) ||
    die "torch eager failed for $model batch $batch: $e_out"
  echo "$e_out" | tail -2 | head -1
  c_out=$("$python" "$here/torch_step_time.py" "${common[@]}" --device cuda --compile 2>&1) ||
    echo "torch.compile failed (reported as null): $(echo "$c_out" | tail -1)"
  tessera=$(echo "$t_out" | step_of)
  eager=$(echo "$e_out" | step_of)
  compiled=$(echo "$c_out" | step_of)
  "$python" -c 'import json,sys
m,b,math,t,e,c=sys.argv[1:]
f=lambda v: None if v=="null" else float(v)
t,e,c=f(t),f(e),f(c)
r=lambda p: None if t is None or not p else round(t/p,3)
print(json.dumps({"model":m,"batch":int(b),"math":math,"tessera_step_s":t,
  "torch_eager_step_s":e,"torch_compile_step_s":c,"ratio_eager":r(e),"ratio_compile":r(c)}))' \
    "$model" "$batch" "$([[ ${#tf32[@]} -gt 0 ]] && echo tf32 || echo fp32)" \
    "$tessera" "$eager" "$compiled"
done
