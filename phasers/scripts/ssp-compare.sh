#!/usr/bin/env bash
# Time to tolerance of `ssp_jacobi` for several staleness bounds, side by
# side: the runs of one repetition go k after k, and each k's median over
# the repetitions is compared with the first k's (0 by default).
#
# Usage: phasers/scripts/ssp-compare.sh [RANKS] [-- ARGS...]
#   RANKS  ranks (default 4)
#   ARGS   passed to every run, e.g. --slow-rank 3 --delay-us 200
# Environment: KS="0 1 2 4" (bounds), REPS=5, HC_WORKERS=1,
#   BIN=target/release/examples/ssp_jacobi.
set -euo pipefail
ranks=${1:-4}
shift || true
[[ ${1:-} == -- ]] && shift
[[ $ranks =~ ^[1-9][0-9]*$ ]] || { echo "ssp-compare: RANKS must be a positive integer, got '$ranks'" >&2; exit 2; }
reps=${REPS:-5}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "ssp-compare: REPS must be a positive integer, got '$reps'" >&2; exit 2; }
ks=${KS:-0 1 2 4}
for k in $ks; do
  [[ $k =~ ^[0-9]+$ ]] || { echo "ssp-compare: KS holds '$k', not a staleness" >&2; exit 2; }
done
bin=${BIN:-target/release/examples/ssp_jacobi}
[[ -x $bin ]] || { echo "ssp-compare: $bin is missing; run: cargo build --release -p hcmpi-phasers --examples" >&2; exit 2; }
export HC_WORKERS=${HC_WORKERS:-1}

runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for ((rep = 0; rep < reps; rep++)); do
  for k in $ks; do
    line=$(mpiexec -n "$ranks" "$bin" --staleness "$k" --json "$@")
    seconds=$(sed -E 's/.*"seconds":([0-9.e+-]+).*/\1/' <<<"$line")
    iterations=$(sed -E 's/.*"iterations":([0-9]+).*/\1/' <<<"$line")
    echo "$k $seconds $iterations" >>"$runs"
  done
done

echo "ssp_jacobi, $ranks ranks, $reps repetitions, args: ${*:-(none)}"
first=${ks%% *}
printf '%-10s %12s %11s %10s\n' staleness 'median s' iterations "vs k = $first"
base=
for k in $ks; do
  median=$(awk -v k="$k" '$1 == k { print $2 }' "$runs" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  iterations=$(awk -v k="$k" '$1 == k { print $3 }' "$runs" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  [[ -z $base ]] && base=$median
  printf '%-10s %12.4f %11s %10.2f\n' "$k" "$median" "$iterations" "$(awk -v a="$median" -v b="$base" 'BEGIN { print a / b }')"
done
