#!/usr/bin/env bash
# Side-by-side UTS throughput of the search modes on one machine.
#
# usage: apps/scripts/uts-compare.sh [TREE] [ROUNDS] [extra uts flags...]
#   TREE    sample tree (default T1L)
#   ROUNDS  rounds of runs (default 3); each round runs every configuration
#           once, in turn, and the best run (highest nodes/s) of each
#           configuration is kept — on a shared machine this filters out
#           most of the interference of other load. The cpu column (least
#           user+sys seconds of any run, whole job) shows the overhead of a
#           mode independently of the load.
#
# Configurations: seq; hcmpi 1 rank x 2 workers; mpi-ws 2 ranks;
# hybrid 1 rank x 2 rayon threads; hybrid 2 ranks x 1 rayon thread.
# Needs a release build (cargo build --release -p hcmpi-apps) and mpiexec.
# Prints one table row per configuration (the best run's JSON fields) and
# the throughput ratios; fails if any configuration counts other nodes.
set -euo pipefail

tree=${1:-T1L}
rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
root=$(cd "$(dirname "$0")/../.." && pwd)
uts=${UTS_BIN:-$root/target/release/uts}
mpiexec=${MPIEXEC:-mpiexec}

[ -x "$uts" ] || { echo "no $uts: run cargo build --release -p hcmpi-apps" >&2; exit 2; }

field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }

extra=("$@")
names=("seq" "hcmpi 1x2" "mpi-ws 2x1" "hybrid 1x2" "hybrid 2x1")
# config_cmd I: sets cmd to the command line of configuration I
config_cmd() {
    case $1 in
        0) cmd=("$uts" --tree "$tree" --json) ;;
        1) cmd=(env HC_WORKERS=2 "$mpiexec" -n 1 "$uts" --tree "$tree" --mode hcmpi --json) ;;
        2) cmd=("$mpiexec" -n 2 "$uts" --tree "$tree" --mode mpi-ws --json) ;;
        3) cmd=(env RAYON_NUM_THREADS=2 "$mpiexec" -n 1 "$uts" --tree "$tree" --mode hybrid --json) ;;
        4) cmd=(env RAYON_NUM_THREADS=1 "$mpiexec" -n 2 "$uts" --tree "$tree" --mode hybrid --json) ;;
    esac
    cmd+=("${extra[@]}")
}

# CPU seconds (user + sys) of a whole run, mpiexec and its ranks included
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
timed() {
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -o "$cpu_file" -f '%U %S' "$@"
    else
        echo "0 0" >"$cpu_file"
        "$@"
    fi
}

best=(0 0 0 0 0)
lines=("" "" "" "" "")
cpus=(0 0 0 0 0)
min_cpu=(1e99 1e99 1e99 1e99 1e99)
for round in $(seq "$rounds"); do
    for i in 0 1 2 3 4; do
        config_cmd "$i"
        line=$(timed "${cmd[@]}" | tail -n 1)
        cpu=$(awk '{ print $1 + $2 }' "$cpu_file")
        rate=$(echo "$line" | field nodes_per_sec)
        if awk -v a="$rate" -v b="${best[$i]}" 'BEGIN { exit !(a > b) }'; then
            best[$i]=$rate
            lines[$i]=$line
            cpus[$i]=$cpu
        fi
        if awk -v a="$cpu" -v b="${min_cpu[$i]}" 'BEGIN { exit !(a < b) }'; then
            min_cpu[$i]=$cpu
        fi
    done
    echo "round $round/$rounds done" >&2
done

echo "best of $rounds rounds, tree $tree; cpu: least user+sys seconds of any run"
printf '%-12s %12s %9s %7s %9s %9s %9s %9s %8s %6s\n' \
    config nodes/s seconds cpu work overhead search idle steals fails
for i in 0 1 2 3 4; do
    l=${lines[$i]}
    printf '%-12s %12.0f %9s %7.2f %9s %9s %9s %9s %8s %6s\n' "${names[$i]}" "${best[$i]}" \
        "$(echo "$l" | field seconds)" "${min_cpu[$i]}" "$(echo "$l" | field work)" \
        "$(echo "$l" | field overhead)" "$(echo "$l" | field search)" \
        "$(echo "$l" | field idle)" "$(echo "$l" | field steals_ok)" \
        "$(echo "$l" | field steals_failed)"
done
nodes0=$(echo "${lines[0]}" | field nodes)
for i in 1 2 3 4; do
    n=$(echo "${lines[$i]}" | field nodes)
    [ "$n" = "$nodes0" ] || { echo "node count mismatch: ${names[$i]} $n != seq $nodes0" >&2; exit 1; }
done
echo
awk -v s="${best[0]}" -v h="${best[1]}" -v w="${best[2]}" -v y1="${best[3]}" -v y2="${best[4]}" 'BEGIN {
    printf "hcmpi 1x2  / seq        = %.3f\n", h / s
    printf "hcmpi 1x2  / mpi-ws 2x1 = %.3f\n", h / w
    printf "mpi-ws 2x1 / seq        = %.3f\n", w / s
    printf "hybrid 1x2 / seq        = %.3f\n", y1 / s
    printf "hybrid 2x1 / seq        = %.3f\n", y2 / s
}'
