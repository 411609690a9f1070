# Helpers shared by the tests/reliability/*.sh scripts (sourced, bash).
#
#   . "$(dirname "$0")/lib.sh"
#   set_train_cmd thread --steps 9; "${cmd[@]}"   # 2-worker `tessera train` of the test model
#   now_ms; same_params a.tsp b.tsp; newest_step DIR/rank-1; flip_byte FILE OFFSET
#   kill_and_resume CKDIR SEED KILLS STEPS   # runs "${cmd[@]}" killed at random steps
#
# Needs: $tessera, $model, $python, $scripts set by the caller.

fail() { echo "FAIL: $*"; exit 1; }

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Sets the array `cmd` to the 2-worker training command for LAUNCHER (thread, or an mpiexec
# path), then extra options. Model-parallel, so the ranks' shards hold different slices.
set_train_cmd() {
  local launcher=$1
  shift
  cmd=(train "$model" --workers 2 --strategy model --cluster v100-vpc32 --threads 1 --quiet "$@")
  if [ "$launcher" = thread ]; then
    cmd=("$tessera" "${cmd[@]}")
  else
    cmd=("$launcher" -n 2 "$tessera" "${cmd[@]}" --comm mpi)
  fi
}

# Two parameter files hold the same values: byte for byte, and compare_params.py at rtol 0.
same_params() {
  cmp -s "$1" "$2" || { echo "$1 and $2 differ in bytes"; return 1; }
  "$python" "$scripts/compare_params.py" "$1" "$2" --rtol 0 > /dev/null ||
    { echo "$1 and $2 differ (compare_params.py)"; return 1; }
}

# The newest step of DIR's ckpt-<step>.tsr files; -1 when none.
newest_step() {
  local newest=-1 f s
  for f in "$1"/ckpt-*.tsr; do
    [ -e "$f" ] || continue
    s=${f##*/ckpt-}
    s=${s%.tsr}
    [ "$s" -gt "$newest" ] && newest=$s
  done
  echo "$newest"
}

# XORs one byte of FILE at OFFSET with 0xff.
flip_byte() {
  "$python" - "$1" "$2" <<'EOF'
import sys
path, offset = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(offset)
    b = f.read(1)
    f.seek(offset)
    f.write(bytes([b[0] ^ 0xFF]))
EOF
}

# Kills (SIGKILL) the processes of a job started with `setsid` as PID, then any process left
# whose command line holds "--checkpoint DIR" (an MPI rank whose launcher died first).
kill_job() {
  local pid=$1 dir=$2 left
  kill -9 -- "-$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    left=$(pgrep -f -- "--checkpoint $dir( |\$)")
    [ -z "$left" ] && return 0
    sleep 0.2
  done
  echo "killing what is left of the job: $left"
  for p in $left; do kill -9 "$p" 2> /dev/null; done
}

# Runs "${cmd[@]}" (whose checkpoints go to CKDIR, a run of STEPS steps) and SIGKILLs the whole
# job KILLS times, then runs it to the end. Kill i comes when rank 0 has saved step target_i
# (KILLS random steps from SEED, sorted, in [5, 90% of the run]) plus a random 0-20 ms, so it
# lands in a step, in a shard write or between the ranks' writes; a target the resumed run
# already passed kills it while it starts (loading, planning). Progress, not time, places the
# kills, so a slower or faster machine gets the same spread. Fails unless half of them landed
# during a run and the last run ended well; sets `landed`.
kill_and_resume() {
  local ck=$1 seed=$2 kills=$3 steps=$4 points point target extra i=0 pid
  points=$(awk -v s="$seed" -v n="$kills" -v last=$((steps * 9 / 10)) 'BEGIN {
    srand(s)
    for (i = 0; i < n; i++) t[i] = 5 + int(rand() * (last - 5))
    for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
    for (i = 0; i < n; i++) printf "%d:%.3f ", t[i], rand() * 0.02 }')
  landed=0
  for point in $points; do
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
  ls "$ck"/rank-*/ | grep -q "\.tmp\." && fail "temporary files are left in $ck: $(ls -R "$ck")"
  return 0
}
