#!/bin/sh
# usage: train_trace_test.sh TESSERA PYTHON WORKDIR thread|MPIEXEC [STRATEGY]
# `tessera train nmt --trace` on 2 workers (threads, or MPI ranks under MPIEXEC: rank 0 writes
# every rank's events) checked against the run's report (check_train_trace.py), then drawn by
# scripts/trace_to_svg.py into an SVG that parses as XML.
set -eu
tessera=$1 python=$2 work=$3 launcher=$4 strategy=${5:-auto}
here=$(dirname "$0")
mkdir -p "$work"
rm -f "$work/trace.json" "$work/report.json" "$work/trace.svg"
set -- train nmt --workers 2 --steps 3 --batch 8 --threads 1 --cluster v100-vpc32 \
  --op-times model --strategy "$strategy" --eval-batches 0 --quiet \
  --trace "$work/trace.json" --report-json "$work/report.json"
if [ "$launcher" = thread ]; then
  "$tessera" "$@" >/dev/null
else
  "$launcher" -n 2 "$tessera" "$@" --comm mpi >/dev/null
fi
"$python" "$here/check_train_trace.py" "$work/trace.json" "$work/report.json" 2
"$python" "$here/../../scripts/trace_to_svg.py" "$work/trace.json" -o "$work/trace.svg" --steps 1
"$python" -c "import sys, xml.etree.ElementTree as t; t.parse(sys.argv[1])" "$work/trace.svg"
