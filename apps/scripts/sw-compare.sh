#!/usr/bin/env bash
# Side-by-side Smith-Waterman throughput (GCUPS) of the modes on one machine.
#
# usage: apps/scripts/sw-compare.sh [LEN] [ROUNDS] [smith-waterman flags...]
#   LEN     length of both sequences (default 30000)
#   ROUNDS  rounds of runs (default 5); each round runs every configuration
#           once, in turn, so that load changes hit all of them alike. The
#           median run (by GCUPS) of each configuration is reported.
#   flags   passed to every smith-waterman run; the scoring ones
#           (--match, --mismatch, --gap-open, --gap-extend, --gap,
#           --matrix blosum62) to parasail too.
#   CORES   (environment) cores to use, default 2: the configurations are
#           sized to it (below).
#   SEQS    (environment) dna (default) or protein: the alphabet of the
#           random sequences. protein needs --matrix blosum62.
#   RELATED (environment) 0 (default): two independent random sequences;
#           a rate R in (0, 1): B is A with a fraction R of its positions
#           mutated (half substitutions, a quarter deletions, a quarter
#           insertions), cut or padded to LEN.
#   SHAPES  (environment) the ranks x workers shapes of the parallel
#           modes, space-separated RxW with R * W = CORES; default
#           "1xC Cx1" (for example SHAPES="1x16 2x8" with CORES=16).
#   ALIGN   (environment) 1: also time seq and hcmpi at every shape with
#           --align (the alignment traced too, --align-width 0) and print
#           what --align costs over the score alone, in time.
#   ROWS    (environment) a file to write the median run of each
#           configuration to, one JSON line each:
#           {"configuration":NAME,"report":<its --json line>}.
#
# Configurations, for C = CORES:
#   seq (one core); seq xC at once: C copies of seq started together, each
#   aligning the whole pair, timed by the slowest (GCUPS: C times the
#   cells over that time): what C cores give C independent runs (below C
#   times seq where the cores share execution units or cache, or the host
#   is loaded; not a bound on a parallel run, which shares one copy of
#   the data); the median over rounds of its slowest copy's time over its
#   fastest's is printed too (for copies of 10 ms or more), with a warning
#   above 1.15: unequal cores (a loaded virtual machine host) slow every
#   parallel configuration;
#   for each shape RxW: hcmpi R ranks x W workers (the engine shared by
#   them: no spare core) and hybrid R ranks x W rayon threads; parasail's striped kernel on one core
#   (apps/scripts/parasail-sw.py), installed with pip when python3 lacks
#   it; the column is left out, with a message, when that fails.
# The sequences are written to FASTA files once, so that every
# configuration, parasail included, aligns the same pair. They live in a
# local temporary directory: the script compares configurations on one
# node.
# Needs a release build (cargo build --release -p hcmpi-apps) and mpiexec.
# Prints one table row per configuration and the ratios of the medians;
# fails if any configuration reports another score or end cell than seq
# (parasail: another score; it may break ties between end cells otherwise).
set -euo pipefail

len=${1:-30000}
rounds=${2:-5}
shift $(($# > 2 ? 2 : $#))
cores=${CORES:-2}
# positive NAME VALUE [MIN]: fails unless VALUE is an integer >= MIN (1)
positive() {
    [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "${3:-1}" ] ||
        { echo "$(basename "$0"): $1 must be an integer >= ${3:-1}, not '$2'" >&2; exit 2; }
}
positive LEN "$len"
positive ROUNDS "$rounds"
# Below 2 cores the configurations coincide (and their names with them).
positive CORES "$cores" 2
root=$(cd "$(dirname "$0")/../.." && pwd)
sw=${SW_BIN:-$root/target/release/smith-waterman}
mpiexec=${MPIEXEC:-mpiexec}

[ -x "$sw" ] || { echo "no $sw: run cargo build --release -p hcmpi-apps" >&2; exit 2; }

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([0-9a-z.e+-]*\).*/\1/p"; }

runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
seqs=${SEQS:-dna}
related=${RELATED:-0}
case $seqs in
    dna) letters=ACGT ;;
    protein) letters=ARNDCQEGHILKMFPSTWYV ;;
    *) echo "$(basename "$0"): SEQS must be dna or protein, not '$seqs'" >&2; exit 2 ;;
esac
awk -v r="$related" 'BEGIN { exit !(r ~ /^(0|0?\.[0-9]+)$/ && r < 1) }' ||
    { echo "$(basename "$0"): RELATED must be a rate in [0, 1), not '$related'" >&2; exit 2; }
# pair: writes a.fa and b.fa, random sequences of length $len over
# $letters (awk's generator, seeded, so reruns on one machine align the
# same pair); b mutated from a when $related > 0.
pair() {
    awk -v n="$len" -v r="$related" -v letters="$letters" -v dir="$runs" 'BEGIN {
        srand(1); k = length(letters)
        for (i = 0; i < n; i++) a[i] = substr(letters, int(rand() * k) + 1, 1)
        m = 0
        if (r > 0) {
            for (i = 0; i < n && m < n; i++) {
                x = rand()
                if (x < r / 2) b[m++] = substr(letters, int(rand() * k) + 1, 1)
                else if (x < 3 * r / 4) continue
                else if (x < r) { b[m++] = a[i]; if (m < n) b[m++] = substr(letters, int(rand() * k) + 1, 1) }
                else b[m++] = a[i]
            }
        }
        while (m < n) b[m++] = substr(letters, int(rand() * k) + 1, 1)
        write(dir "/a.fa", "a", a, n); write(dir "/b.fa", "b", b, n)
    }
    function write(path, name, s, n,    i) {
        printf(">%s\n", name) >path
        for (i = 0; i < n; i++) {
            printf("%s", s[i]) >path
            if (i % 60 == 59 || i == n - 1) printf("\n") >path
        }
        close(path)
    }'
}
pair
input=(--a "$runs/a.fa" --b "$runs/b.fa" --json "$@")
extra="$*"
read -r -a shapes <<<"${SHAPES:-1x$cores ${cores}x1}"
[ ${#shapes[@]} -gt 0 ] || { echo "$(basename "$0"): SHAPES names no shape" >&2; exit 2; }
declare -A seen_shape
for shape in "${shapes[@]}"; do
    [[ $shape =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] &&
        [ $((BASH_REMATCH[1] * BASH_REMATCH[2])) -eq "$cores" ] ||
        { echo "$(basename "$0"): SHAPES: '$shape' is not RxW with R * W = CORES ($cores)" >&2; exit 2; }
    [ -z "${seen_shape[$shape]:-}" ] ||
        { echo "$(basename "$0"): SHAPES names $shape twice" >&2; exit 2; }
    seen_shape[$shape]=1
done
names=("seq" "seq x$cores at once")
for shape in "${shapes[@]}"; do names+=("hcmpi $shape" "hybrid $shape"); done
parasail=$root/apps/scripts/parasail-sw.py
# The scoring flags among the extra ones, for parasail.
scoring=()
while [ $# -gt 0 ]; do
    case $1 in
        --match | --mismatch | --gap-open | --gap-extend | --gap | --matrix)
            [ $# -ge 2 ] || { echo "$(basename "$0"): $1 needs a value" >&2; exit 2; }
            scoring+=("$1" "$2"); shift 2 ;;
        --match=* | --mismatch=* | --gap-open=* | --gap-extend=* | --gap=* | --matrix=*)
            scoring+=("${1%%=*}" "${1#*=}"); shift ;;
        *) shift ;;
    esac
done
if ! python3 -c 'import parasail' 2>/dev/null; then
    echo "sw-compare: installing parasail (pip install parasail)" >&2
    python3 -m pip install --quiet parasail >&2 ||
        python3 -m pip install --quiet --break-system-packages parasail >&2 || true
fi
if [ "${ALIGN:-0}" = 1 ]; then
    names+=("seq --align")
    for shape in "${shapes[@]}"; do names+=("hcmpi $shape --align"); done
fi
if python3 -c 'import parasail' 2>/dev/null; then
    names+=("parasail 1x1")
else
    echo "sw-compare: no parasail column: python3 cannot import parasail and pip could not install it" >&2
fi
count=${#names[@]}
# config_cmd NAME: sets cmd to the command line of configuration NAME
config_cmd() {
    local mode shape align=()
    read -r mode shape _ <<<"$1"
    [[ $1 == *" --align" ]] && align=(--align --align-width 0)
    case $mode in
        seq) cmd=("$sw" --mode seq ${align[@]+"${align[@]}"}) ;;
        hcmpi | hybrid)
            cmd=("$mpiexec" -n "${shape%x*}" "$sw" --mode "$mode" --workers "${shape#*x}" ${align[@]+"${align[@]}"}) ;;
        parasail)
            cmd=(python3 "$parasail" "$runs/a.fa" "$runs/b.fa" ${scoring[@]+"${scoring[@]}"})
            return ;;
    esac
    cmd+=("${input[@]}")
}

# at_once: runs $cores copies of seq together and prints the slowest
# one's line with the GCUPS of all of them (cores x its own).
at_once() {
    config_cmd seq
    local k pid pids=()
    for k in $(seq "$cores"); do
        "${cmd[@]}" | tail -n 1 >"$runs/copy$k" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || { echo "$(basename "$0"): a copy of seq failed" >&2; exit 1; }
    done
    for k in $(seq "$cores"); do
        echo "$(field seconds <"$runs/copy$k") $(cat "$runs/copy$k")"
    done | sort -g >"$runs/copies"
    # How much slower the slowest copy was than the fastest: about 1 on
    # equal cores, 2 where one core runs at half speed (on a virtual
    # machine, a host core shared with another guest). Not for runs under
    # 10 ms, whose start-up (cold caches, first page faults) varies more
    # than that.
    awk 'NR == 1 { fast = $1 } END { if ($1 >= 0.01) print $1 / fast }' "$runs/copies" >>"$runs/spread"
    tail -n 1 "$runs/copies" | cut -d' ' -f2- |
        awk -v c="$cores" '{
            match($0, /"gcups":[0-9.e+-]*/)
            rate = substr($0, RSTART + 8, RLENGTH - 8)
            print substr($0, 1, RSTART + 7) (c * rate) substr($0, RSTART + RLENGTH)
        }'
}

for round in $(seq "$rounds"); do
    for i in $(seq 0 $((count - 1))); do
        if [ "${names[$i]}" = "seq x$cores at once" ]; then
            at_once >>"$runs/$i"
            continue
        fi
        config_cmd "${names[$i]}"
        "${cmd[@]}" | tail -n 1 >>"$runs/$i"
    done
    echo "round $round/$rounds done" >&2
done

# median_line I: the run of configuration I with the median GCUPS
median_line() {
    while read -r line; do
        echo "$(echo "$line" | field gcups) $line"
    done <"$runs/$1" | sort -g | awk -v n="$rounds" 'NR == int((n + 1) / 2) { $1 = ""; print }'
}

[ -z "${ROWS:-}" ] || : >"$ROWS"
alphabet=$seqs
[ "$seqs" = dna ] && alphabet=DNA
kind="random $alphabet"
[ "$related" = 0 ] || kind="related $alphabet ($related mutated)"
echo "$kind $len x $len${extra:+, $extra}, $cores cores, median of $rounds rounds"
echo
echo "| configuration | GCUPS | seconds | score | end_a | end_b |"
echo "|---|---:|---:|---:|---:|---:|"
declare -A rates
result0=""
for i in $(seq 0 $((count - 1))); do
    l=$(median_line "$i")
    rate=$(echo "$l" | field gcups)
    rates[${names[$i]}]=$rate
    result="$(echo "$l" | field score) $(echo "$l" | field end_a) $(echo "$l" | field end_b)"
    [ -n "$result0" ] || result0=$result
    if [ "${names[$i]}" = "parasail 1x1" ]; then
        [ "${result%% *}" = "${result0%% *}" ] ||
            { echo "score mismatch: parasail ${result%% *} != seq ${result0%% *}" >&2; exit 1; }
    else
        [ "$result" = "$result0" ] || { echo "result mismatch: ${names[$i]} $result != seq $result0" >&2; exit 1; }
    fi
    [ -z "${ROWS:-}" ] || printf '{"configuration":"%s","report":%s}\n' "${names[$i]}" "${l# }" >>"$ROWS"
    # shellcheck disable=SC2086 # the three fields are meant to split
    printf '| %s | %.3f | %.3f | %s | %s | %s |\n' "${names[$i]}" "$rate" \
        "$(echo "$l" | field seconds)" $result
done
echo
o=${rates[seq x$cores at once]}
s=${rates[seq]}
ratio() { awk -v a="$2" -v b="$3" -v l="$1" 'BEGIN { printf "%-42s = %.3f\n", l, a / b }'; }
ratio "seq x$cores at once / seq" "$o" "$s"
if [ -s "$runs/spread" ]; then
    spread=$(sort -g "$runs/spread" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    printf '%-42s = %.3f\n' "seq x$cores at once: slowest / fastest copy" "$spread"
    awk -v s="$spread" 'BEGIN { exit !(s > 1.15) }' &&
        echo "sw-compare: the copies of seq ran at unequal speeds (median slowest / fastest $spread): some core is slower than another, as on a loaded host; every parallel configuration waits for its slowest core" >&2
fi
for shape in "${shapes[@]}"; do
    h=${rates[hcmpi $shape]}
    ratio "hcmpi $shape / seq" "$h" "$s"
    ratio "hcmpi $shape / seq x$cores at once" "$h" "$o"
    ratio "hybrid $shape / seq" "${rates[hybrid $shape]}" "$s"
    ratio "hcmpi $shape / hybrid $shape" "$h" "${rates[hybrid $shape]}"
done
[ -z "${rates[parasail 1x1]:-}" ] || ratio "seq / parasail 1x1" "$s" "${rates[parasail 1x1]}"
if [ "${ALIGN:-0}" = 1 ]; then
    ratio "seq: time with --align / without" "$s" "${rates[seq --align]}"
    for shape in "${shapes[@]}"; do
        ratio "hcmpi $shape: time with --align / without" "${rates[hcmpi $shape]}" "${rates[hcmpi $shape --align]}"
    done
fi
