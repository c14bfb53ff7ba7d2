# shellcheck shell=bash
# tests/bench/rounds.sh: sourced by the benchmarks that compare counts (connections,
# threads) over alternating rounds: tpcc_concurrency.sh and postgres_peer.sh.

# The counts of LIST in round R's order: every other round reversed (1 16, 16 1, ...), so
# that a slow or fast spell of the disk does not always fall on the same count.
round_order() {
  if (( $1 % 2 == 0 )); then printf '%s\n' $2 | tac | tr '\n' ' '; else printf '%s' "$2"; fi
}

# An awk function, median(list) of a space-separated list of numbers, to put before an
# awk program: awk "$MEDIAN_AWK"'...'.
# shellcheck disable=SC2034 # used by the scripts that source this file
MEDIAN_AWK='
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }'
