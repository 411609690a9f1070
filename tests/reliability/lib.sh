# Helpers shared by the tests/reliability/*.sh scripts (sourced, bash).
#
#   . "$(dirname "$0")/lib.sh"
#   set_train_cmd thread --steps 9; "${cmd[@]}"   # 2-worker `tessera train` of the test model
#   now_ms; same_params a.tsp b.tsp; newest_step DIR/rank-1; flip_byte FILE OFFSET
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
