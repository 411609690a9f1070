#!/bin/bash
# usage: interrupt_test.sh TESSERA PYTHON3 SCRIPTS_DIR WORK_DIR LAUNCHER
#   LAUNCHER: thread (2 worker threads) or an mpiexec path (2 MPI ranks)
#
# Ctrl-C (SIGINT) during `tessera train --checkpoint DIR`: every worker ends after the same
# step, the step is checkpointed, the command says where it stopped (and, on threads, exits 130;
# mpiexec reports its own code), and the same command run again resumes from that step
# (docs/training.md).
set -u
tessera=$1 python=$2 scripts=$3 work=$4 launcher=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tessera=$(realpath "$tessera") work=$(realpath -m "$work")
rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot make $work"
ck="$work/ck"
run=(train nmt --workers 2 --steps 100000 --checkpoint "$ck" --checkpoint-every 5
     --cluster v100-vpc32 --eval-batches 0 --timeout 20)
if [ "$launcher" = thread ]; then
  run=("$tessera" "${run[@]}")
else
  run=("$launcher" -n 2 "$tessera" "${run[@]}" --comm mpi)
fi
"${run[@]}" > run.log 2>&1 &
pid=$!
until [ "$(newest_step "$ck/rank-0")" -ge 10 ] || ! kill -0 "$pid" 2> /dev/null; do sleep 0.05; done
kill -0 "$pid" 2> /dev/null || { cat run.log; fail "the run ended before it was interrupted"; }
kill -INT "$pid"
code=0
wait "$pid" || code=$?
cat run.log | tail -3
# On threads the command's own exit code; under mpiexec the launcher reports what it decides.
if [ "$launcher" = thread ]; then
  [ "$code" = 130 ] || fail "exit code $code after SIGINT; expected 130"
fi
line=$(grep -o "interrupted after step [0-9]*" run.log) || fail "no 'interrupted after step' line"
stopped=${line##* }
[ "$(newest_step "$ck/rank-0")" = "$stopped" ] && [ "$(newest_step "$ck/rank-1")" = "$stopped" ] ||
  fail "the ranks' newest shards ($(newest_step "$ck/rank-0"), $(newest_step "$ck/rank-1")) are" \
       "not step $stopped"
# The same command, to a few steps more, resumes where the interrupted run stopped.
resume=("${run[@]}")
for i in "${!resume[@]}"; do [ "${resume[$i]}" = 100000 ] && resume[$i]=$((stopped + 3)); done
"${resume[@]}" > resume.log 2>&1 || { cat resume.log; fail "the resumed run failed"; }
# mpiexec forwards the ranks' stdout and stderr apart, so the final-loss line (stdout) can land
# in the middle of this one (stderr): match the step number's end, not the text after it.
grep -qE "resumed from step $stopped([^0-9]|$)" resume.log ||
  { cat resume.log; fail "no resume from $stopped"; }
echo "interrupt ok: stopped after step $stopped with exit 130, checkpointed on both ranks, resumed"
