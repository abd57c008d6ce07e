#!/usr/bin/env bash
# Side-by-side UTS throughput of the search modes on one machine.
#
# usage: apps/scripts/uts-compare.sh [TREE] [ROUNDS] [extra uts flags...]
#   TREE    sample tree (default T1L)
#   ROUNDS  rounds of runs (default 5); each round runs every configuration
#           once, in turn, so that load changes hit all of them alike. The
#           median run (by nodes/s) of each configuration is reported.
#   CORES   (environment) cores to use, default 2: the configurations are
#           sized to it (below).
#   ROWS    (environment) a file to write the median run of each
#           configuration to, one JSON line each:
#           {"configuration":NAME,"report":<its --json line>}.
#
# Configurations, for C = CORES:
#   seq; hcmpi 1 rank x C workers (the engine shared by them: no spare core);
#   hcmpi 2 ranks x C/2 workers; mpi-ws C ranks; hybrid 1 rank x C rayon
#   threads; hybrid C ranks x 1 rayon thread.
# Needs a release build (cargo build --release -p hcmpi-apps) and mpiexec.
# Prints one table row per configuration and the throughput ratios of the
# medians; fails if any configuration counts other nodes than seq.
set -euo pipefail

tree=${1:-T1L}
rounds=${2:-5}
shift $(($# > 2 ? 2 : $#))
cores=${CORES:-2}
# positive NAME VALUE [MIN]: fails unless VALUE is an integer >= MIN (1)
positive() {
    [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "${3:-1}" ] ||
        { echo "$(basename "$0"): $1 must be an integer >= ${3:-1}, not '$2'" >&2; exit 2; }
}
positive ROUNDS "$rounds"
# Below 2 cores the configurations coincide (and their names with them).
positive CORES "$cores" 2
half=$((cores / 2 > 0 ? cores / 2 : 1))
root=$(cd "$(dirname "$0")/../.." && pwd)
uts=${UTS_BIN:-$root/target/release/uts}
mpiexec=${MPIEXEC:-mpiexec}

[ -x "$uts" ] || { echo "no $uts: run cargo build --release -p hcmpi-apps" >&2; exit 2; }

field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }

extra=("$@")
names=("seq" "hcmpi 1x$cores" "hcmpi 2x$half" "mpi-ws ${cores}x1" "hybrid 1x$cores"
    "hybrid ${cores}x1")
count=${#names[@]}
# config_cmd I: sets cmd to the command line of configuration I
config_cmd() {
    case $1 in
        0) cmd=("$uts" --tree "$tree" --json) ;;
        1) cmd=("$mpiexec" -n 1 "$uts" --tree "$tree" --mode hcmpi --workers "$cores" --json) ;;
        2) cmd=("$mpiexec" -n 2 "$uts" --tree "$tree" --mode hcmpi --workers "$half" --json) ;;
        3) cmd=("$mpiexec" -n "$cores" "$uts" --tree "$tree" --mode mpi-ws --json) ;;
        4) cmd=(env RAYON_NUM_THREADS="$cores" "$mpiexec" -n 1 "$uts" --tree "$tree" --mode hybrid --json) ;;
        5) cmd=(env RAYON_NUM_THREADS=1 "$mpiexec" -n "$cores" "$uts" --tree "$tree" --mode hybrid --json) ;;
    esac
    cmd+=("${extra[@]}")
}

runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
for round in $(seq "$rounds"); do
    for i in $(seq 0 $((count - 1))); do
        config_cmd "$i"
        "${cmd[@]}" | tail -n 1 >>"$runs/$i"
    done
    echo "round $round/$rounds done" >&2
done

# median_line I: the run of configuration I with the median nodes/s
median_line() {
    while read -r line; do
        echo "$(echo "$line" | field nodes_per_sec) $line"
    done <"$runs/$1" | sort -g | awk -v n="$rounds" 'NR == int((n + 1) / 2) { $1 = ""; print }'
}

[ -z "${ROWS:-}" ] || : >"$ROWS"
echo "tree $tree, $cores cores, median of $rounds rounds (Table III times: seconds per worker)"
echo
echo "| configuration | nodes/s | seconds | work | overhead | search | idle | steals | failed steals |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
rates=()
nodes0=""
for i in $(seq 0 $((count - 1))); do
    l=$(median_line "$i")
    rate=$(echo "$l" | field nodes_per_sec)
    rates+=("$rate")
    n=$(echo "$l" | field nodes)
    [ -n "$nodes0" ] || nodes0=$n
    [ "$n" = "$nodes0" ] || { echo "node count mismatch: ${names[$i]} $n != seq $nodes0" >&2; exit 1; }
    [ -z "${ROWS:-}" ] || printf '{"configuration":"%s","report":%s}\n' "${names[$i]}" "${l# }" >>"$ROWS"
    printf '| %s | %.3g | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s |\n' "${names[$i]}" "$rate" \
        "$(echo "$l" | field seconds)" "$(echo "$l" | field work)" \
        "$(echo "$l" | field overhead)" "$(echo "$l" | field search)" \
        "$(echo "$l" | field idle)" "$(echo "$l" | field steals_ok)" \
        "$(echo "$l" | field steals_failed)"
done
echo
awk -v s="${rates[0]}" -v h="${rates[1]}" -v h2="${rates[2]}" -v w="${rates[3]}" \
    -v y1="${rates[4]}" -v y2="${rates[5]}" -v c="$cores" -v hf="$half" 'BEGIN {
    printf "hcmpi 1x%d / seq        = %.3f\n", c, h / s
    printf "hcmpi 1x%d / mpi-ws %dx1 = %.3f\n", c, c, h / w
    printf "hcmpi 2x%d / mpi-ws %dx1 = %.3f\n", hf, c, h2 / w
    printf "hcmpi 1x%d / hybrid 1x%d = %.3f\n", c, c, h / y1
    printf "mpi-ws %dx1 / seq       = %.3f\n", c, w / s
    printf "hybrid 1x%d / seq       = %.3f\n", c, y1 / s
    printf "hybrid %dx1 / seq       = %.3f\n", c, y2 / s
}'
