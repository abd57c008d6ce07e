#!/bin/bash
# An hcmpi job under Slurm: 4 nodes, 2 ranks per node (one per socket),
# 16 cores per rank. Submit with `sbatch slurm.sh`.
#SBATCH --job-name=hcmpi
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=16
#SBATCH --time=00:30:00
set -euo pipefail

# Workers per rank. One core less than the rank has: the spare core goes to
# the communication engine's own thread (`auto` placement then picks
# `dedicated`). Use all of them ($SLURM_CPUS_PER_TASK) to have idle workers
# step the engine instead (`shared`).
export HC_WORKERS=$((SLURM_CPUS_PER_TASK - 1))
# A rank whose MPI operations make no progress for 2 minutes prints what it
# waits for (the job goes on).
export HCMPI_STALL_SECS=120
# Slurm 22.05 and later: srun does not inherit --cpus-per-task from sbatch.
export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK

# Each rank bound to its 16 cores; hcmpi reads the node's cores from the
# union of its ranks' CPU sets. Add --mpi=pmix (or pmi2) if your MPI needs it.
srun --cpu-bind=cores ./target/release/hello-hcmpi
