#!/usr/bin/env bash
# The test suite against Open MPI instead of MPICH (the last step of
# scripts/test): every test that runs MPI. Left out, since the MPI
# implementation cannot change them: the packages whose tests never call
# MPI (hc-runtime, the test harness, the report renderer), the unit tests
# of the applications' kernels and tree generators (hcmpi-apps' library
# and its MPI-free integration tests), and the doc tests. The MPICH run has
# all of them; here each would be one more binary to build, which is most
# of this step's time.
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
# No debug line tables: this build is only run, never profiled, and
# building without them is about a tenth faster.
export CARGO_PROFILE_RELEASE_DEBUG=false
packages=(-p hc-mpi -p hcmpi-dddf -p hcmpi-phasers -p hcmpi-benches -p hcmpi-guide)
# The examples the multi-rank tests launch (a plain `cargo test` builds
# them; one with targets named does not).
# hcmpi-apps' examples too: sw_modes runs sw_kept_rows, and `--test`
# alone builds no example.
cargo build --release "${packages[@]}" -p hcmpi-apps --examples
cargo test --release "${packages[@]}" --lib --bins --tests
# The drivers under mpiexec (modes, metrics) and as singletons (CLI).
cargo test --release -p hcmpi-apps --bins \
  --test sw_modes --test uts_modes --test observability --test sw_cli --test uts_cli
