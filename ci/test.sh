#!/usr/bin/env bash
# Unit, integration, doc and multi-rank tests (release: the stress and
# fan-out tests are sized for optimized code), then the multi-rank suites
# again with each communication-engine placement forced (the default run
# uses `auto`, which picks shared placement on a machine with fewer cores
# than ranks × (workers + 1)).
set -euo pipefail
cargo test --workspace --release
for placement in dedicated shared; do
  echo "== multi-rank suites, HCMPI_PLACEMENT=$placement"
  HCMPI_PLACEMENT=$placement cargo test --release -p hc-mpi -p hcmpi-dddf -p hcmpi-phasers --test mpiexec
  HCMPI_PLACEMENT=$placement cargo test --release -p hcmpi-apps --test uts_modes --test sw_modes
done
