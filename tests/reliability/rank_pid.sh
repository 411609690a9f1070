#!/bin/sh
# One MPI rank of the fault tests (fault_rank_test.sh): runs the command as a child, writes the
# child's pid to $PID_DIR/rank-<r>.pid and exits with its status. As in tests/comm/mpi/
# rank_wrapper.sh (docs/communication.md, "Faults"): Hydra kills the whole job when a rank dies
# of a signal, so a killed rank reaches Hydra as an exit code, and Hydra's SIGUSR1 failure
# notice is ignored, so the survivors must notice a dead or stopped peer themselves.
trap '' USR1
"$@" &
child=$!
echo "$child" > "$PID_DIR/rank-${PMI_RANK:-0}.pid"
wait "$child"
exit $?
