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

# 2. Kill and resume. Kill i comes when rank 0 has saved step target_i (10 random steps, sorted,
# in [5, 90% of the run]) plus a random 0-20 ms, so it lands in a step, in a shard write or
# between the ranks' writes; a target the resumed run already passed kills it while it starts.
# Progress, not time, places the kills, so a slower or faster machine gets the same spread.
ck="$work/ck"
set_train_cmd "$launcher" --steps $steps --checkpoint "$ck" --checkpoint-every 1 \
  --save-params out.tsp --timeout 20
kill_points=$(awk -v s="$seed" -v n="$kills" -v last=$((steps * 9 / 10)) 'BEGIN {
  srand(s)
  for (i = 0; i < n; i++) t[i] = 5 + int(rand() * (last - 5))
  for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
  for (i = 0; i < n; i++) printf "%d:%.3f ", t[i], rand() * 0.02 }')
landed=0 i=0
for point in $kill_points; do
  i=$((i + 1))
  target=${point%%:*} extra=${point##*:}
  setsid "${cmd[@]}" > "run$i.log" 2>&1 &
  pid=$!
  while [ "$(newest_step "$ck/rank-0")" -lt "$target" ] && kill -0 "$pid" 2> /dev/null; do
    sleep 0.005
  done
  sleep "$extra"
  if kill -0 "$pid" 2> /dev/null; then
    kill_job "$pid" "$ck"
    landed=$((landed + 1))
    echo "kill $i at step $target + ${extra} s: newest shards rank-0 $(newest_step "$ck/rank-0")," \
         "rank-1 $(newest_step "$ck/rank-1")"
  else
    wait "$pid" || { cat "run$i.log"; fail "run $i failed before its kill"; }
    echo "kill $i at step $target + ${extra} s: the run had already ended"
  fi
done
[ "$landed" -ge $((kills / 2)) ] || fail "only $landed of $kills kills landed during a run"
"${cmd[@]}" > final.log 2>&1 || { cat final.log; fail "the run after the last kill failed"; }
grep "resumed from step" final.log
same_params out.tsp ref.tsp || fail "the resumed run's parameters differ from the uninterrupted run's"
ls "$ck"/rank-*/ | grep -q "\.tmp\." && fail "temporary files are left in $ck: $(ls -R "$ck")"
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
