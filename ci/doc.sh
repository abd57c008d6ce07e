#!/usr/bin/env bash
# API documentation of every crate, with rustdoc warnings (broken links,
# bad code blocks) as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
