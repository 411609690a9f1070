#!/usr/bin/env bash
# Hybrid training through `tessera train` equals one worker: for each strategy, P ranks (threads
# or MPI processes) train MODEL for 20 steps on the global batch and must end with parameters
# within 1e-4 relative of a one-worker run's, and must send exactly the plan's bytes.
#
# `nccl` runs the workers as threads whose collectives go through NCCL on one GPU each; it exits
# 77 (skipped) when fewer than RANKS GPUs are visible.
#
#   hybrid_equivalence_test.sh TESSERA PYTHON SCRIPTS_DIR WORKDIR MODEL RANKS thread|nccl|MPIEXEC S...
set -euo pipefail
tessera=$1 python=$2 scripts=$3 work=$4 model=$5 ranks=$6 launcher=$7
shift 7
if [ "$launcher" = nccl ]; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  if [ "${gpus:-0}" -lt "$ranks" ]; then
    echo "SKIP: the nccl back-end needs $ranks GPUs and ${gpus:-0} are visible (compiled, not run)"
    exit 77
  fi
fi
mkdir -p "$work"
common=(--cluster v100-vpc32 --steps 20 --batch 8 --optimizer sgd --lr 0.05 --seed 3 --threads 1
        --eval-batches 0 --quiet)
"$tessera" train "$model" --workers 1 "${common[@]}" --save-params "$work/single.tsp" >/dev/null
# `vocab`: a plan file whose classifier leaves its logits split along the vocabulary and whose
# loss is computed there (the vocabulary-parallel softmax), the other layers as auto plans them.
vocab_plan() {
  "$tessera" plan "$model" --devices "$ranks" --cluster v100-vpc32 --batch 8 --executable \
    --format json -o "$work/vocab-plan.json" >/dev/null
  "$python" "$scripts/set_plan_layers.py" "$work/vocab-plan.json" "$work/vocab-plan.json" \
    classifier=model_parallel:feature loss=model_parallel:feature
  echo "$work/vocab-plan.json"
}
for strategy in "$@"; do
  out=$work/$strategy-$ranks
  arg=$strategy
  if [ "$strategy" = vocab ]; then arg=$(vocab_plan); fi
  if [ "$launcher" = thread ] || [ "$launcher" = nccl ]; then
    "$tessera" train "$model" --comm "$launcher" --workers "$ranks" --strategy "$arg" \
      "${common[@]}" --save-params "$out.tsp" --report-json "$out.json" >/dev/null
  else
    "$launcher" -n "$ranks" "$tessera" train "$model" --comm mpi --workers "$ranks" \
      --strategy "$arg" "${common[@]}" --save-params "$out.tsp" --report-json "$out.json" \
      >/dev/null
  fi
  grep -q '"bytes_match_plan": true' "$out.json" || {
    echo "FAIL $strategy P=$ranks: measured bytes differ from the plan's"; grep -A6 '"measured"' "$out.json"; exit 1; }
  grep -q "\"strategy\": \"$(case $strategy in data|auto) echo data_parallel;; model|vocab) echo model_parallel;; late) echo late_multiply;; esac)\"" "$out.json" || {
    echo "FAIL $strategy P=$ranks: no layer has the strategy asked for"; exit 1; }
  "$python" "$scripts/compare_params.py" "$work/single.tsp" "$out.tsp" --rtol 1e-4 ||
    { echo "FAIL $strategy P=$ranks: parameters differ from one worker's"; exit 1; }
  echo "ok $strategy P=$ranks ($launcher)"
done
echo "hybrid equivalence ok"
