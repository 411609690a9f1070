#!/bin/bash
# usage: crash_resume_test.sh TESSERA PYTHON3 SCRIPTS_DIR WORK_DIR MODEL LAUNCHER [KILLS]
#   LAUNCHER: thread (2 worker threads) or an mpiexec path (2 MPI ranks)
#
# Crash and resume (docs/reliability.md): a 2-worker `tessera train` that checkpoints every step
# is SIGKILLed (the whole job, as a machine crash would) KILLS times (default 10) at random
# moments and resumed each time; the last run ends with a parameter file byte-identical to an
# uninterrupted run's. The random kill points come from a seed printed first; CRASH_SEED=N
# reruns the same points. Then a byte of the newest shard is flipped: the resume names the refused
# file, continues from the previous step and still ends identical.
set -u
tessera=$1 python=$2 scripts=$3 work=$4 model=$5 launcher=$6 kills=${7:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tessera=$(realpath "$tessera") scripts=$(realpath "$scripts") model=$(realpath "$model")
work=$(realpath -m "$work")
steps=300
seed=${CRASH_SEED:-$(( $(date +%s%N) / 1000 % 1000000 ))}
echo "crash_resume ($launcher): seed $seed; rerun with CRASH_SEED=$seed for the same kill points"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot make $work"

# 1. The uninterrupted run.
set_train_cmd "$launcher" --steps $steps --checkpoint "$work/ref_ck" --checkpoint-every 1 \
  --save-params ref.tsp
"${cmd[@]}" > ref.log 2>&1 || { cat ref.log; fail "the uninterrupted run failed"; }

# 2. Kill and resume (lib.sh: kill_and_resume).
ck="$work/ck"
set_train_cmd "$launcher" --steps $steps --checkpoint "$ck" --checkpoint-every 1 \
  --save-params out.tsp --timeout 20
kill_and_resume "$ck" "$seed" "$kills" "$steps"
grep "resumed from step" final.log
same_params out.tsp ref.tsp || fail "the resumed run's parameters differ from the uninterrupted run's"
echo "$landed kills during the run, parameters identical to the uninterrupted run"

# 3. A flipped byte in the newest shard of rank 1: refused, naming the file; the ranks go back
# to the newest step both hold and end identical. The job is killed a third of the way in.
ck="$work/ck_flip"
set_train_cmd "$launcher" --steps $steps --checkpoint "$ck" --checkpoint-every 1 \
  --save-params flip.tsp --timeout 20
setsid "${cmd[@]}" > flip1.log 2>&1 &
pid=$!
until [ "$(newest_step "$ck/rank-1")" -ge $((steps / 3)) ] || ! kill -0 "$pid" 2> /dev/null; do
  sleep 0.01
done
kill_job "$pid" "$ck"
newest=$(newest_step "$ck/rank-1")
[ "$newest" -lt "$steps" ] || fail "the run ended before it could be killed"
expect=-1
for f in "$ck"/rank-1/ckpt-*.tsr; do
  s=${f##*/ckpt-}; s=${s%.tsr}
  [ "$s" -lt "$newest" ] && [ -e "$ck/rank-0/ckpt-$s.tsr" ] && [ "$s" -gt "$expect" ] && expect=$s
done
shard="$ck/rank-1/ckpt-$newest.tsr"
flip_byte "$shard" 200
echo "flipped byte 200 of $shard; expecting a resume from step $expect"
"${cmd[@]}" > flip2.log 2>&1 || { cat flip2.log; fail "the run after the flipped byte failed"; }
cat flip2.log
grep -q "refused a shard: checkpoint '$shard' is corrupt: checksum mismatch" flip2.log ||
  fail "the resume did not name the corrupt shard $shard"
grep -q "resumed from step $expect " flip2.log || fail "the run did not resume from step $expect"
same_params flip.tsp ref.tsp || fail "the run that skipped the corrupt shard ends with other parameters"
echo "crash resume ok: $landed kills, corrupt shard skipped, parameters identical"
