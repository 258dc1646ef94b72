#!/bin/sh
# The rank-report program the MPI launchers start in place of the job's training script
# (tests/e2e/test_mpi_frameworks.py): which rank of how many runs on which pod (its hostname).
# Under Hydra (MPICH, Intel MPI: PMI_RANK, no OMPI_*) rank 0 first reads its stdin to the end: the proxy
# forwards mpiexec's (empty) stdin to it, and a rank that has already exited makes that write fail (EPIPE)
# and the whole run with it. Open MPI is left alone (4.1 runs with --stdin none; PRRTE needs nothing).
if [ "${PMI_RANK:-}" = 0 ] && [ -z "${OMPI_COMM_WORLD_RANK:-}" ]; then
  timeout 20 cat >/dev/null 2>&1
fi
# A real rank lives at least through MPI_Init, which waits for every rank of its job; this one only reports,
# so it stays 2 s. Open MPI 5's daemon (PRRTE 3.0.14, several launch threads) may handle a rank's exit
# before its own launch when the exit comes within milliseconds: it then reports the rank RUNNING for good
# and prterun waits for it until killed (1 run in 25-40 with two ranks per pod, under load, in both harnesses).
sleep 2
echo "KF2RANK rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-?}}} size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-?}} host=$(hostname)"
