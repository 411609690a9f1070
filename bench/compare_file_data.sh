#!/usr/bin/env bash
# The training step on file data against the same model on random data of the same shapes
# (issue 25: with prefetching, the file data's step within 5% of the synthetic one). For each
# job, runs `tessera train JOB --train FILE` with --data task and with --data random, alternating,
# --runs times each, and prints one JSON line: both medians of the measured step time plus the
# wait for the step's batch (the report's step_time_s + input_wait_s, each a median over the
# run's steps), their ratio and the settings.
#
# usage: bench/compare_file_data.sh [--nmt TSV] [--ocr TSV] [--steps N] [--batch B]
#                                   [--workers N] [--runs R] [--tessera PATH]
#   --nmt TSV      parallel text (default: tests/data/corpora/nmt_sample.tsv; none: skip)
#   --ocr TSV      image<TAB>text lines (default: tests/data/corpora/ocr_sample/lines.tsv;
#                  none: skip)
#   --steps N      steps per run (default 30)    --batch B   global batch (default 16)
#   --workers N    workers (default 2)           --runs R    runs per side (default 3)
#   --tessera P    the tessera binary (default build/bin/tessera)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
source "$here/compare_lib.sh"
script_name=compare_file_data.sh
nmt=$root/tests/data/corpora/nmt_sample.tsv
ocr=$root/tests/data/corpora/ocr_sample/lines.tsv
steps=30 batch=16 workers=2 runs=3 tessera=$root/build/bin/tessera
while [[ $# -gt 0 ]]; do
  case $1 in
    --nmt) need_value "$@"; nmt=$2; shift 2 ;;
    --ocr) need_value "$@"; ocr=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --batch) need_value "$@"; batch=$2; shift 2 ;;
    --workers) need_value "$@"; workers=$2; shift 2 ;;
    --runs) need_value "$@"; runs=$2; shift 2 ;;
    --tessera) need_value "$@"; tessera=$2; shift 2 ;;
    -h|--help) show_help "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -x $tessera ]] || die "no tessera binary at $tessera (build it: cmake --build build)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The report's measured step time of one run.
step_time() {  # JOB DATA EXTRA...
  local job=$1 data=$2
  shift 2
  "$tessera" train "$job" --data "$data" --steps "$steps" --batch "$batch" --workers "$workers" \
    --cluster v100-vpc32 --eval-batches 0 --quiet --report-json "$work/r.json" "$@" \
    > /dev/null 2> "$work/err" || { cat "$work/err" >&2; die "tessera train $job failed"; }
  /usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["measured"]; print(m["step_time_s"] + m["input_wait_s"])' \
    "$work/r.json"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

compare() {  # JOB FILE EXTRA...
  local job=$1 file=$2
  shift 2
  : > "$work/task"; : > "$work/random"
  for ((i = 0; i < runs; i++)); do
    step_time "$job" task --train "$file" "$@" >> "$work/task"
    step_time "$job" random --train "$file" "$@" >> "$work/random"
  done
  local task random
  task=$(median < "$work/task")
  random=$(median < "$work/random")
  /usr/bin/python3 -c 'import json,sys; j,f,t,r,s,b,w,n=sys.argv[1:]; print(json.dumps({"job": j, "file": f, "file_step_s": float(t), "random_step_s": float(r), "ratio": round(float(t) / float(r), 4), "steps": int(s), "batch": int(b), "workers": int(w), "runs": int(n)}))' \
    "$job" "$file" "$task" "$random" "$steps" "$batch" "$workers" "$runs"
}

if [[ $nmt != none ]]; then
  # One vocabulary for every run (trained once here), so that only the data differs.
  "$tessera" train nmt --train "$nmt" --vocab-size 1000 --steps 1 --batch "$batch" \
    --workers "$workers" --cluster v100-vpc32 --eval-batches 0 --quiet \
    --save-params "$work/p.tsp" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
  compare nmt "$nmt" --vocab "$work/p.tsp.sentencepiece.model"
fi
if [[ $ocr != none ]]; then compare ocr "$ocr"; fi
