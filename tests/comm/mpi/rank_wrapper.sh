#!/bin/sh
# Runs one MPI rank as a child of this shell, for the fault drill. Hydra SIGKILLs the whole job
# when a rank dies of a signal; through this shell a killed rank is an exit code (137) instead,
# so the other ranks live on to detect the failure themselves. Hydra's SIGUSR1 failure notice
# is ignored for the same reason.
trap '' USR1
"$@"
exit $?
