#!/bin/sh
# usage: train_kill_test.sh MPIEXEC TESSERA MODEL
# `tessera train` on 2 MPI ranks; rank 1 is killed mid-run. Passes when rank 0 exits with an
# error naming the dead peer soon after the kill instead of hanging (docs/hybrid-training.md):
# within 30 s of it, the communication timeout (3 s) with room for a loaded machine (two busy
# processes beside the ranks on 2 cores took 12 s); a rank that hangs runs to the test's 120 s
# limit. Counted from the kill, not from the start, which a loaded machine also delays.
mpiexec=$1 tessera=$2 model=$3
here=$(dirname "$0")
killed_at=$(mktemp)
trap 'rm -f "$killed_at"' EXIT
out=$(KILLED_AT_FILE=$killed_at KILL_AFTER=4 UCX_TLS=^cma "$mpiexec" -disable-auto-cleanup -n 2 "$here/train_kill_rank.sh" \
  "$tessera" train "$model" --comm mpi --workers 2 --steps 100000 --batch 8 --threads 1 \
  --cluster v100-vpc32 --timeout 3 --quiet 2>&1)
end=$(date +%s)
echo "$out"
line=$(echo "$out" | grep "^tessera train: rank 0" | head -1)
[ -n "$line" ] || { echo "FAIL: rank 0 printed no error"; exit 1; }
echo "$line" | grep -Eq "rank 1|peer 1" || { echo "FAIL: rank 0's error does not name rank 1"; exit 1; }
kill=$(cat "$killed_at")
[ -n "$kill" ] || { echo "FAIL: rank 1 was not killed (the run ended first)"; exit 1; }
elapsed=$((end - kill))
[ "$elapsed" -le 30 ] || { echo "FAIL: the run ended ${elapsed} s after the kill (timeout 3 s)"; exit 1; }
echo "PASS: rank 0 reported the dead rank ${elapsed} s after the kill"
