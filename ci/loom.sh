#!/usr/bin/env bash
# loom models of the runtime protocols, with a bounded preemption count.
set -euo pipefail
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export RUSTFLAGS="--cfg loom"
export CARGO_TARGET_DIR=target/loom
cargo test -p hc-runtime --release --lib loom
cargo test -p hc-mpi --release --lib loom
cargo test -p hcmpi-dddf --release --lib loom
cargo test -p hcmpi-phasers --release --lib loom
