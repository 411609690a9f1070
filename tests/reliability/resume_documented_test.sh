#!/bin/bash
# usage: resume_documented_test.sh TESSERA PYTHON3 SCRIPTS_DIR WORK_DIR LAUNCHER [KILLS] [STEPS]
#   LAUNCHER: thread (2 worker threads) or an mpiexec path (2 MPI ranks)
#
# The documented way to resume (README, docs/training.md): the same `tessera train nmt --workers 2
# --checkpoint DIR --checkpoint-every K` command, run again after it died. Here it plans with the
# auto planner on this machine's calibrated `local` cluster with measured op times, as users run
# it, so every restart would re-plan: it must follow the checkpoint's plan instead. The job is
# SIGKILLed KILLS times (default 10) at random steps and run again each time; every restart
# resumes, and the last one ends with a parameter file byte-identical to an uninterrupted run's.
# Random kill points come from a seed printed first (CRASH_SEED=N reruns them).
set -u
tessera=$1 python=$2 scripts=$3 work=$4 launcher=$5 kills=${6:-10} steps=${7:-120}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tessera=$(realpath "$tessera") scripts=$(realpath "$scripts") work=$(realpath -m "$work")
seed=${CRASH_SEED:-$(( $(date +%s%N) / 1000 % 1000000 ))}
echo "resume_documented ($launcher): seed $seed; rerun with CRASH_SEED=$seed for the same kill points"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot make $work"

# This machine, calibrated into the work folder: `--cluster local` (the default) reads it.
export TESSERA_LOCAL_CLUSTER="$work/local.json"
"$tessera" calibrate --quick -o "$TESSERA_LOCAL_CLUSTER" > calibrate.log 2>&1 ||
  { cat calibrate.log; fail "tessera calibrate failed"; }

# The documented command, with the test's steps and files.
documented() {
  cmd=(train nmt --workers 2 --steps "$steps" --checkpoint "$1" --checkpoint-every 5
       --save-params "$2" --eval-batches 1 --timeout 20)
  if [ "$launcher" = thread ]; then
    cmd=("$tessera" "${cmd[@]}")
  else
    cmd=("$launcher" -n 2 "$tessera" "${cmd[@]}" --comm mpi)
  fi
}

# MPI ranks do not time ops: a run on threads stores them in local.json first.
if [ "$launcher" != thread ]; then
  "$tessera" train nmt --workers 2 --steps 1 --quiet --eval-batches 0 > store.log 2>&1 ||
    { cat store.log; fail "the run that stores the op times failed"; }
fi

# 1. The uninterrupted run.
documented "$work/ref_ck" ref.tsp
"${cmd[@]}" > ref.log 2>&1 || { cat ref.log; fail "the uninterrupted run failed"; }
ref_plan="$work/ref_ck/plan.json"

# 2. Killed and run again (lib.sh: kill_and_resume); every restart after the first save resumes.
ck="$work/ck"
documented "$ck" out.tsp
kill_and_resume "$ck" "$seed" "$kills" "$steps"
resumed=0
for log in run*.log final.log; do
  grep -q "another run" "$log" && { cat "$log"; fail "$log: a restart was refused: the plan moved"; }
  grep -q "resuming the run in" "$log" && resumed=$((resumed + 1))
done
grep "resumed from step" final.log || fail "the last run did not resume"
strategies() {
  "$python" -c 'import json, sys
print([(l["name"], l["strategy"]) for l in json.load(open(sys.argv[1]))["layers"]])' "$1"
}
[ "$(strategies "$ref_plan")" = "$(strategies "$ck/plan.json")" ] ||
  fail "the killed run's plan differs from the uninterrupted run's"
same_params out.tsp ref.tsp || fail "the resumed run's parameters differ from the uninterrupted run's"
echo "documented resume ok: $landed kills during the run, $resumed restarts followed the" \
     "checkpoint's plan, parameters identical to the uninterrupted run's"
