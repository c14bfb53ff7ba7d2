#!/usr/bin/env bash
# `appsim tpcc run --rate`: open loop with the TPC-C mix. Transactions arrive at the rate
# (evenly spaced with --uniform) whatever the completions, the result records the open
# loop, the achieved rate follows the offered one on a drive that keeps up, and --rate
# with the closed loop's --pacing or --cycle, or --uniform without --rate, is refused
# with exit status 2.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "jq is not installed (scripts/deps.sh lists it)"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
T="$APPSIM_TMP/target"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$APPSIM" tpcc prepare --target "$T" --quiet --json "$APPSIM_TMP/prep.json" >/dev/null
# (--vusers 0 is the default, 10 per warehouse, as it always was)
"$APPSIM" tpcc run --target "$T" --rate 40 --uniform --duration 3 --warmup 1 --sync off --quiet \
  --vusers 0 --json "$APPSIM_TMP/open.json" >/dev/null
jq -e '.tpcc.setup.open_loop == true and .tpcc.setup.rate_per_instance == 40 and
       .tpcc.setup.vusers_per_instance == 10 and .config.vusers == 10 and
       .tpcc.setup.arrivals == "uniform" and .summary.errors == 0' "$APPSIM_TMP/open.json" >/dev/null ||
  fail "open loop not recorded: $(jq -c .tpcc.setup "$APPSIM_TMP/open.json")"
# 120 evenly spaced arrivals in the measured 3 s: the achieved rate is the offered one
# within 15 % (completions counted by their end).
jq -e '(.summary.tps - 40 | fabs) < 6' "$APPSIM_TMP/open.json" >/dev/null ||
  fail "achieved $(jq .summary.tps "$APPSIM_TMP/open.json") tps at an offered 40"
# Every type of the mix ran.
jq -e '[.per_type[] | .count > 0] | all' "$APPSIM_TMP/open.json" >/dev/null ||
  fail "not every type ran: $(jq -c '[.per_type | to_entries[] | {(.key): .value.count}]' "$APPSIM_TMP/open.json")"

refused() {
  local why=$1 rc=0; shift
  "$APPSIM" tpcc run --target "$T" --duration 1 --quiet "$@" >/dev/null 2>"$APPSIM_TMP/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "$why: exit $rc, not 2"
  [ -s "$APPSIM_TMP/err" ] || fail "$why: no message"
}
refused "--rate with --pacing" --rate 10 --pacing spec
refused "--rate with --cycle" --rate 10 --cycle 1s
refused "--uniform without --rate" --uniform
grep -q -- "--rate" "$APPSIM_TMP/err" || fail "the --uniform refusal does not say what it needs"
echo ok
