#!/usr/bin/env bash
# `appsim report` through the real binary: a self-contained HTML file with the charts;
# refusals leave no file behind. (The browser rendering is checked in
# tests/unit/test_compare_report.c.)
set -euo pipefail
source "$(dirname "$0")/compare_fixtures.bash"
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

fx_result fast.json tpcc "Fast Drive" F1 10 2 $(fx_seq 100000 1000 40)
fx_result slow.json tpcc "Slow Drive" S1 10 2 $(fx_seq 1000000 1000 10)
"$APPSIM" report fast.json slow.json -o report.html --title "two drives"
[ -s report.html ] || fail "no report"
head -c 15 report.html | grep -q '<!DOCTYPE html>' || fail doctype
grep -q '<title>two drives</title>' report.html || fail title
for c in g1-rate g1-latency g1-percentiles g1-rate-time g1-p99-time; do
  grep -q "data-chart=\"$c\"" report.html || fail "chart $c missing"
done
# Two bars for throughput with the results' values.
grep -o 'class="bar"[^>]*data-series="TPS"[^>]*' report.html | grep -c 'data-value' | grep -qx 2 || fail "bars"
grep -q 'data-cat="Slow Drive" data-value="5"' report.html || fail "bar value"
! grep -Eq '<script|<link|src=|url\(|https://' report.html || fail "external or active content"
[ "$(ls)" = "$(printf 'fast.json\nreport.html\nslow.json')" ] || fail "stray files: $(ls)"

set +e; "$APPSIM" report fast.json >/dev/null 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] && grep -q -- "-o" err.txt || fail "missing -o not refused"
echo '[]' >bad.json
set +e; "$APPSIM" report fast.json bad.json -o r2.html 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] && grep -q bad.json err.txt || fail "bad file not refused"
[ ! -e r2.html ] || fail "report written despite refusal"
echo "report_cli: ok"
