#!/bin/bash
# An hcmpi job under PBS Pro / OpenPBS: 4 nodes, 2 ranks per node, 16 cores
# per rank. Submit with `qsub pbs.sh`.
#PBS -N hcmpi
#PBS -l select=4:ncpus=32:mpiprocs=2
#PBS -l walltime=00:30:00
set -euo pipefail
cd "${PBS_O_WORKDIR:-.}"

export HC_WORKERS=15        # 16 cores per rank, one left to the engine's thread
export HCMPI_STALL_SECS=120

if mpiexec --version 2>&1 | grep -q "Open MPI"; then
  # Open MPI: 2 ranks per node, each bound to 16 cores; -x forwards the
  # variables to the other nodes.
  mpiexec --map-by ppr:2:node:PE=16 --bind-to core \
    -x HC_WORKERS -x HCMPI_STALL_SECS ./target/release/hello-hcmpi
else
  # MPICH (Hydra): forwards the environment by default.
  mpiexec -f "$PBS_NODEFILE" -n 8 -ppn 2 -bind-to core:16 ./target/release/hello-hcmpi
fi
