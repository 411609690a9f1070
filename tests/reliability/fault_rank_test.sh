#!/bin/bash
# usage: fault_rank_test.sh MPIEXEC TESSERA PYTHON3 SCRIPTS_DIR WORK_DIR MODEL KILL|STOP
#
# A faulty MPI rank (docs/reliability.md). `tessera train` on 2 MPI ranks, checkpointing every
# step, with --timeout 3; once training is under way, rank 1 gets SIGKILL (a dead rank:
# ctest reliability.rank_killed) or SIGSTOP (a hung rank: reliability.rank_hung) at a random
# moment (seeded, printed; FAULT_SEED=N repeats it). Passes when
#  - rank 0 ends by itself within the timeout + 4 s of slack, with an error naming rank 1
#    (Hydra runs with -disable-auto-cleanup, so no launcher ends it for it);
#  - the job exits non-zero and does not hang (for STOP the test then kills the stopped rank,
#    as an operator would, and mpiexec must end);
#  - the job, started again, resumes from its checkpoints and ends with parameters identical to
#    an uninterrupted run's.
set -u
mpiexec=$1 tessera=$2 python=$3 scripts=$4 work=$5 model=$6 signal=$7
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tessera=$(realpath "$tessera") scripts=$(realpath "$scripts") model=$(realpath "$model")
work=$(realpath -m "$work")
# Enough steps that the job is still training when the signal comes (150 steps of this small
# model took 0.2 s, and ended before a delay of up to 0.3 s ran out).
timeout_s=3 steps=1000 slack_s=4
seed=${FAULT_SEED:-$(( $(date +%s%N) / 1000 % 1000000 ))}
echo "fault_rank ($signal): seed $seed; rerun with FAULT_SEED=$seed for the same moment"
rm -rf "$work" && mkdir -p "$work/pids" && cd "$work" || fail "cannot make $work"

set_train_cmd "$mpiexec" --steps $steps --save-params ref.tsp
"${cmd[@]}" > ref.log 2>&1 || { cat ref.log; fail "the uninterrupted run failed"; }

# The faulty run: Hydra without auto-cleanup, each rank through rank_pid.sh.
ck="$work/ck"
args=(train "$model" --workers 2 --strategy model --cluster v100-vpc32 --threads 1 --quiet
      --comm mpi --steps $steps --checkpoint "$ck" --checkpoint-every 1 --timeout $timeout_s
      --save-params out.tsp)
PID_DIR="$work/pids" UCX_TLS=^cma setsid "$mpiexec" -disable-auto-cleanup -n 2 "$here/rank_pid.sh" \
  "$tessera" "${args[@]}" > fault.log 2>&1 &
job=$!
until [ "$(newest_step "$ck/rank-1")" -ge 10 ] || ! kill -0 "$job" 2> /dev/null; do sleep 0.01; done
rank0=$(cat pids/rank-0.pid 2> /dev/null) rank1=$(cat pids/rank-1.pid 2> /dev/null)
[ -n "$rank0" ] && [ -n "$rank1" ] && kill -0 "$job" 2> /dev/null ||
  { cat fault.log; kill_job "$job" "$ck"; fail "the job did not get under way"; }
sleep "$(awk -v s="$seed" 'BEGIN { srand(s); printf "%.3f", rand() * 0.3 }')"
kill "-$signal" "$rank1"
signalled=$(now_ms)
echo "SIG$signal to rank 1 (pid $rank1) at step $(newest_step "$ck/rank-1")"

# Rank 0 must end by itself. It runs while ps shows it in any state but zombie: one ps call
# per check, since its parent may reap it between two calls (kill -0, then ps with no output,
# read as "still running", failed this test once).
running() {
  local state
  state=$(ps -o stat= -p "$1" 2> /dev/null | cut -c1)
  [ -n "$state" ] && [ "$state" != Z ]
}
limit=$(( (timeout_s + slack_s) * 1000 ))
while running "$rank0" && [ $(( $(now_ms) - signalled )) -le $limit ]; do sleep 0.05; done
ended=$(( $(now_ms) - signalled ))
rank0_left=no
running "$rank0" && rank0_left=yes
[ "$signal" = STOP ] && kill -9 "$rank1" 2> /dev/null  # the operator ends the stopped rank
for _ in $(seq 100); do kill -0 "$job" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$job" 2> /dev/null; then
  job_left=yes code=137
  kill_job "$job" "$ck"
else
  job_left=no
  wait "$job"
  code=$?
fi
cat fault.log
[ "$rank0_left" = no ] || fail "rank 0 still runs $ended ms after SIG$signal (timeout ${timeout_s} s)"
[ "$job_left" = no ] || fail "mpiexec still runs 10 s after rank 0 ended: the job hangs"
[ "$code" -ne 0 ] || fail "the job exited 0 after losing rank 1"
line=$(grep "^tessera train: rank 0" fault.log | head -1)
[ -n "$line" ] || fail "rank 0 printed no error"
echo "$line" | grep -Eq "rank 1|peer 1" || fail "rank 0's error does not name rank 1"
echo "rank 0 ended $ended ms after SIG$signal (timeout ${timeout_s} s), the job exited $code"

# The job resumes from its checkpoints and ends as if nothing happened.
set_train_cmd "$mpiexec" --steps $steps --checkpoint "$ck" --checkpoint-every 1 \
  --save-params out.tsp --timeout 20
"${cmd[@]}" > resume.log 2>&1 || { cat resume.log; fail "the resumed job failed"; }
grep "resumed from step" resume.log || fail "the job did not resume from its checkpoints"
same_params out.tsp ref.tsp || fail "the resumed job's parameters differ from the uninterrupted run's"
echo "fault ok: rank 1 SIG$signal, rank 0 named it within the timeout, the job resumed identically"
