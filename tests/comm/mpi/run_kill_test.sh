#!/bin/sh
# usage: run_kill_test.sh MPIEXEC PROGRAM RANKS
# Runs the fault drill (mpi_kill_main.cc): rank 1 dies mid all-reduce; passes when every other
# rank printed an error naming the all-reduce within timeout (3 s) + 2 s of slack.
# -disable-auto-cleanup and rank_wrapper.sh keep Hydra from killing the survivors itself;
# UCX_TLS=^cma keeps UCX from aborting a survivor that was reading the dead rank's memory
# (docs/communication.md, "Faults").
mpiexec=$1 program=$2 ranks=$3
here=$(dirname "$0")
out=$(UCX_TLS=^cma "$mpiexec" -disable-auto-cleanup -n "$ranks" "$here/rank_wrapper.sh" "$program" 2>&1)
echo "$out"
r=0
while [ "$r" -lt "$ranks" ]; do
  if [ "$r" -ne 1 ]; then
    line=$(echo "$out" | grep "^rank $r: error after")
    if [ -z "$line" ]; then
      echo "FAIL: rank $r printed no error"; exit 1
    fi
    echo "$line" | grep -q "all-reduce #" || { echo "FAIL: rank $r's error names no all-reduce"; exit 1; }
    echo "$line" | grep -Eq "DEADLINE_EXCEEDED|UNAVAILABLE" || { echo "FAIL: rank $r: unexpected code"; exit 1; }
    secs=$(echo "$line" | sed 's/^rank [0-9]*: error after \([0-9.]*\) s.*/\1/')
    awk -v s="$secs" 'BEGIN { exit !(s < 5.0) }' || { echo "FAIL: rank $r took $secs s"; exit 1; }
  fi
  r=$((r + 1))
done
echo "PASS: every surviving rank reported the dead rank within the timeout"
