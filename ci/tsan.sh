#!/usr/bin/env bash
# ThreadSanitizer over the hc-runtime stress test (random task graphs with
# nested finishes, AND/OR data-driven tasks and puts from tasks) and the
# other tests of tasks, joins, DDFs, futures and panics.
#
# The standard library is rebuilt with the sanitizer (-Zbuild-std), so its
# synchronization is seen too. crossbeam and hc-runtime detect the
# sanitizer in their build scripts and replace the stand-alone fences TSan
# cannot model with equivalent atomic operations.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
  rustup toolchain install nightly --profile minimal
  rustup component add rust-src --toolchain nightly
fi
target="$(rustc -vV | sed -n 's/^host: //p')"
export RUSTFLAGS="-Zsanitizer=thread"
export RUSTDOCFLAGS="-Zsanitizer=thread"
export CARGO_TARGET_DIR=target/tsan
# ci/tsan.supp: the one race crossbeam-deque commits on purpose.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/ci/tsan.supp ${TSAN_OPTIONS:-}"
cargo +nightly test -Zbuild-std --target "$target" -p hc-runtime \
  --test stress --test join --test futures --test finish --test ddf --test panics \
  --test wait_any
