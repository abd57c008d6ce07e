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
# Miri interprets on one thread, so the tests run as two groups side by
# side, each in its own target directory (so that neither cargo waits on
# the other's build lock); each group's output is printed when it ends.
# The groups are balanced by the time each test binary takes under Miri.
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
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# group NAME: runs the cargo miri commands read from stdin, one per line,
# in target/miri-NAME, logging to $logs/NAME.
group() {
  local name=$1 status=0 line
  while read -r line; do
    echo "== cargo +nightly miri test $line" >>"$logs/$name"
    # shellcheck disable=SC2086 # the line is a list of arguments
    CARGO_TARGET_DIR="target/miri-$name" cargo +nightly miri test $line \
      >>"$logs/$name" 2>&1 || { status=$?; break; }
  done
  return "$status"
}

runtime_a="--test futures --test ddf --test stress --test panics --test wait_any --test trace"
runtime_b="--test finish --test join --test metrics --test examples"
# Every integration test of hc-runtime is in a group (`idle` compiles to
# nothing under Miri: it measures CPU time in child processes).
for file in hc-runtime/tests/*.rs; do
  name=$(basename "$file" .rs)
  case " $runtime_a $runtime_b --test idle " in
    *" --test $name "*) ;;
    *) echo "ci/miri.sh: hc-runtime/tests/$name.rs is in no Miri group" >&2; exit 1 ;;
  esac
done

group a <<LIST &
-p hc-runtime --lib $runtime_a
LIST
a=$!
group b <<LIST &
-p hc-runtime $runtime_b
-p hcmpi-phasers --no-default-features --lib --test events
LIST
b=$!
status=0
wait "$a" || status=1
cat "$logs/a"
wait "$b" || status=1
cat "$logs/b"
[ "$status" -eq 0 ] || echo "ci/miri.sh: a group failed (see above)" >&2
exit "$status"
