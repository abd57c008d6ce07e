#!/usr/bin/env bash
# The test suite against Open MPI instead of MPICH (the last step of
# scripts/test): the unit, integration and multi-rank tests of every
# package that links MPI. Left out, since the MPI implementation cannot
# change them: hc-runtime and the test harness (no MPI), and the doc
# tests (the MPICH run has them; each is a binary of its own to build,
# most of this step's time otherwise).
#
# Installs Open MPI with apt-get when missing and keeps MPICH the system
# default (Debian ranks Open MPI higher in the `mpi` and `mpirun`
# alternatives). Builds into target/openmpi, so the MPICH build in target/
# is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh

if ! command -v mpiexec.openmpi >/dev/null 2>&1 || ! pkg-config --exists ompi; then
  echo "ci/openmpi.sh: installing openmpi-bin libopenmpi-dev"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
  for group in mpi mpirun; do
    mpich=$(update-alternatives --list "$group" 2>/dev/null | grep mpich | head -n 1 || true)
    if [ -n "$mpich" ]; then
      $sudo update-alternatives --set "$group" "$mpich" >/dev/null
    fi
  done
fi

export MPI_PKG_CONFIG=ompi
export MPIEXEC=mpiexec.openmpi
export CARGO_TARGET_DIR=target/openmpi
packages=(--workspace --exclude hc-runtime --exclude hcmpi-testkit)
# The examples the multi-rank tests launch (a plain `cargo test` builds
# them; one with targets named does not).
cargo build --release "${packages[@]}" --examples
cargo test --release "${packages[@]}" --lib --bins --tests
