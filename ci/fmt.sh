#!/usr/bin/env bash
# Formatting check.
set -euo pipefail
cargo fmt --all -- --check
