#!/usr/bin/env bash
# The user guide builds with mdBook (installed with cargo when missing), and
# mdBook reports no problem (a missing include, a broken link in SUMMARY.md).
# Its samples run in ci/test.sh: `cargo test -p hcmpi-guide` checks that
# every Rust block only includes a sample and runs every sample.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mdbook >/dev/null 2>&1; then
  echo "ci/guide.sh: installing mdbook"
  cargo install mdbook --locked --version "^0.5"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
mdbook build guide 2>&1 | tee "$log"
if grep -qE "\b(ERROR|WARN)\b" "$log"; then
  echo "ci/guide.sh: mdbook reported problems (above)" >&2
  exit 1
fi
test -f target/guide/index.html
