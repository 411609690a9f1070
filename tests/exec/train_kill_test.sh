#!/bin/sh
# usage: train_kill_test.sh MPIEXEC TESSERA MODEL
# `tessera train` on 2 MPI ranks; rank 1 is killed mid-run. Passes when rank 0 exits with an
# error naming the dead peer within the communication timeout (3 s) + 4 s of slack after the
# kill, instead of hanging (docs/hybrid-training.md).
mpiexec=$1 tessera=$2 model=$3
here=$(dirname "$0")
start=$(date +%s)
out=$(KILL_AFTER=4 UCX_TLS=^cma "$mpiexec" -disable-auto-cleanup -n 2 "$here/train_kill_rank.sh" \
  "$tessera" train "$model" --comm mpi --workers 2 --steps 100000 --batch 8 --threads 1 \
  --cluster v100-vpc32 --timeout 3 --quiet 2>&1)
end=$(date +%s)
echo "$out"
line=$(echo "$out" | grep "^tessera train: rank 0" | head -1)
[ -n "$line" ] || { echo "FAIL: rank 0 printed no error"; exit 1; }
echo "$line" | grep -Eq "rank 1|peer 1" || { echo "FAIL: rank 0's error does not name rank 1"; exit 1; }
elapsed=$((end - start))
[ "$elapsed" -le 11 ] || { echo "FAIL: the run took ${elapsed} s after start (kill at 4 s, timeout 3 s)"; exit 1; }
echo "PASS: rank 0 reported the dead rank in ${elapsed} s"
