#!/bin/sh
# One MPI rank of the train fault drill (train_kill_test.sh): rank 1 is SIGKILLed after $KILL_AFTER
# seconds; the others run to their end. Hydra's SIGUSR1 failure notice is ignored and a killed
# rank is an exit code, so the survivors must notice the death themselves (rank_wrapper.sh).
# With $KILLED_AT_FILE set, rank 1 writes the time of the kill (seconds since the epoch) there.
trap '' USR1
if [ "${PMI_RANK:-0}" = 1 ]; then
  "$@" &
  pid=$!
  sleep "${KILL_AFTER:-3}"
  kill -9 "$pid"
  if [ -n "${KILLED_AT_FILE:-}" ]; then date +%s >"$KILLED_AT_FILE"; fi
  wait "$pid"
  exit $?
fi
"$@"
exit $?
