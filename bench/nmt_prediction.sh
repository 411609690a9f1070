#!/usr/bin/env bash
# nmt's predicted against measured step time on 2 thread workers, three plans in turn, RUNS
# times: `--strategy data`, `--strategy auto`, and auto's plan file with the classifier and the
# loss set back to data-parallel (the plan auto chose before the vocabulary-parallel loss).
# OpenBLAS chooses its own kernels (OPENBLAS_CORETYPE unset); the `local` cluster must exist
# (`tessera calibrate`). Prints each run's step time, exposed communication and bytes rows.
#
#   bench/nmt_prediction.sh [TESSERA=build/bin/tessera] [RUNS=3] [STEPS=30]
set -euo pipefail
tessera=${1:-build/bin/tessera} runs=${2:-3} steps=${3:-30}
unset OPENBLAS_CORETYPE
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tessera" plan nmt --devices 2 --cluster local --executable --format json \
  -o "$work/auto.json" >/dev/null
python3 "$(dirname "$0")/../scripts/set_plan_layers.py" "$work/auto.json" "$work/before.json" \
  classifier=data_parallel:batch loss=data_parallel:batch
for run in $(seq "$runs"); do
  for strategy in data auto "$work/before.json"; do
    echo "== run $run, plan $(basename "$strategy" .json)"
    "$tessera" train nmt --workers 2 --steps "$steps" --strategy "$strategy" --eval-batches 0 \
      --report 2>&1 | grep -E "^step time|^exposed|^bytes sent"
  done
done
