#!/usr/bin/env bash
# Unit, integration, doc and multi-rank tests (release: the stress and
# fan-out tests are sized for optimized code), then the multi-rank suites
# again with each communication-engine placement forced (the default run
# uses `auto`, which picks shared placement on a machine with fewer cores
# than ranks × (workers + 1)).
set -euo pipefail
cargo test --workspace --release
#
# The drivers' suites run their hcmpi ranks with 2 workers each, for which
# `auto` picks dedicated placement only with 3 or more cores per rank: on
# a machine of 2 cores the default run already was the shared one, so it
# is not repeated.
for placement in dedicated shared; do
  echo "== multi-rank suites, HCMPI_PLACEMENT=$placement"
  HCMPI_PLACEMENT=$placement cargo test --release -p hc-mpi -p hcmpi-dddf -p hcmpi-phasers --test mpiexec
  if [ "$placement" = shared ] && [ "$(nproc)" -le 2 ]; then
    echo "== drivers' suites: auto placement was shared already ($(nproc) cores)"
    continue
  fi
  HCMPI_PLACEMENT=$placement cargo test --release -p hcmpi-apps --test uts_modes --test sw_modes
done
