#!/usr/bin/env bash
# `appsim compare` through the real binary: ranks and percentages in every format, the
# refusal to rank different configurations, combined repeated runs, and clear refusals
# (exit 2, the file named) of files that are not appsim results.
set -euo pipefail
source "$(dirname "$0")/compare_fixtures.bash"
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Fast: 40 samples in 2 s (20 tps), 100-139 us. Slow: 10 in 2 s (5 tps), 1 ms.
fx_result fast.json tpcc "Fast Drive" F1 10 2 $(fx_seq 100000 1000 40)
fx_result slow.json tpcc "Slow Drive" S1 10 2 $(fx_seq 1000000 1000 10)
fx_result fast2.json tpcc "Fast Drive" F1 10 4 $(fx_seq 300000 1000 40)
fx_result big.json tpcc "Big Drive" B1 100 2 $(fx_seq 100000 1000 40)

out=$("$APPSIM" compare slow.json fast.json)
echo "$out"
grep -q "Fast Drive.*Slow Drive" <<<"$out" || fail "columns not in rank order"
grep -Eq "^TPS +20.00 \* +5.000 \(25.0%\)" <<<"$out" || fail "TPS row"
grep -Eq "^rank \(runs\) +1 \(1\) +2 \(1\)" <<<"$out" || fail "rank row"

# CSV: one line per cell with the percentage of the best.
"$APPSIM" compare --format csv slow.json fast.json >out.csv
grep -q '^1,tpcc,rate,TPS,tps,Slow Drive,2,1,5,5,5,25,0$' out.csv || { cat out.csv; fail "csv"; }
# JSON parses and says which is best.
"$APPSIM" compare --format json slow.json fast.json >out.json
grep -q '"schema": "appsim-compare/1"' out.json || fail "json schema"
# Markdown table.
"$APPSIM" compare --format markdown slow.json fast.json | grep -q '^| metric | Fast Drive | Slow Drive |$' || fail markdown

# Repeated runs: combined into one column, 80 samples over 6 s, range shown.
out=$("$APPSIM" compare fast.json fast2.json slow.json)
echo "$out"
grep -Eq "^TPS +13.33 \[10.00-20.00\] \*" <<<"$out" || fail "combined runs"
grep -Eq "^rank \(runs\) +1 \(2\) +2 \(1\)" <<<"$out" || fail "runs count"

# Different scale: not ranked together, and the reason is given.
set +e
out=$("$APPSIM" compare fast.json big.json 2>err.txt); rc=$?
set -e
[ $rc -eq 0 ] || fail "compare with incomparable configs exited $rc"
grep -q "not ranked against" err.txt || fail "no refusal message"
grep -q "scale 10 vs 100" <<<"$out" || fail "reason not in output"

# Not results: exit 2, the file named.
echo '{"hello": 1}' >notresult.json
echo 'garbage' >garbage.json
for f in notresult.json garbage.json missing.json; do
  set +e; "$APPSIM" compare fast.json "$f" >/dev/null 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] || fail "$f: exit $rc, expected 2"
  grep -q "$f" err.txt || fail "$f not named: $(cat err.txt)"
done
set +e; "$APPSIM" compare --format yaml fast.json >/dev/null 2>&1; rc=$?; set -e
[ $rc -eq 2 ] || fail "bad format accepted"
"$APPSIM" compare --help | grep -q "format" || fail "help"
echo "compare_cli: ok"
