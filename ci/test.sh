#!/usr/bin/env bash
# Unit, integration, doc and multi-rank tests (release: the stress and
# fan-out tests are sized for optimized code).
set -euo pipefail
cargo test --workspace --release
