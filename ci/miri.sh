#!/usr/bin/env bash
# Miri over the tests that do not touch MPI: hc-runtime's unit and
# integration tests, and phasers' unit and event tests built without its
# `mpi` feature.
#
# - Tree Borrows instead of Stacked Borrows: crossbeam-epoch, under the
#   work-stealing deques, is not compatible with Stacked Borrows
#   (crossbeam-rs/crossbeam#545); crossbeam runs its own Miri tests the
#   same way.
# - -Zmiri-ignore-leaks: crossbeam-epoch's global collector keeps its
#   per-thread records and garbage bags for the life of the process
#   (crossbeam-rs/crossbeam#579), which Miri reports as leaks at exit.
# - -Zmiri-preemption-rate=0: the Chase-Lev deque reads a slot
#   speculatively while its owner may overwrite it (the steal's CAS then
#   discards the value), a race Miri reports when it preempts a thief
#   there; crossbeam tests its deque the same way. Threads still switch
#   wherever one blocks or yields, which every waiting loop here does.
#
# The tests shrink their sizes under `cfg(miri)`; those that start child
# processes or measure CPU time are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal
  rustup component add miri rust-src --toolchain nightly
fi
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-tree-borrows -Zmiri-ignore-leaks -Zmiri-preemption-rate=0}"
cargo +nightly miri test -p hc-runtime --lib --tests
cargo +nightly miri test -p hcmpi-phasers --no-default-features --lib --test events
