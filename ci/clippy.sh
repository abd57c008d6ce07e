#!/usr/bin/env bash
# Lints, warnings as errors, every target.
set -euo pipefail
cargo clippy --workspace --all-targets --release -- -D warnings
