#!/usr/bin/env bash
# `appsim compare` and `appsim report` through the real binary on OLTP curve results
# (tests/integration/oltp_curve/: the shape `tpcc run` and `sysbench run` write for
# --curve and user steps): the service-level TPS ranked first with its limits in every
# format, a drive with no point within the limits last and said so, results judged
# against different limits not ranked on it, the per-drive latency chart with its limits,
# and results without a curve as before.
set -euo pipefail
source "$(dirname "$0")/compare_fixtures.bash"
: "${APPSIM:?}" "${APPSIM_TMP:?}" "${APPSIM_SRC:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
fx=$APPSIM_SRC/tests/integration/oltp_curve
cp "$fx"/*.json .

# A third drive with the highest maximum but a lower service-level TPS than Fast Drive:
# the service-level figure, not the maximum, decides.
sed -e 's/"Fast Drive"/"Wide Drive"/; s/"F1"/"W1"/' \
    -e 's/"max_tps": 812.4/"max_tps": 999.0/; s/"tps": 650.0,/"tps": 400.0,/' fast.json >wide.json
grep -q '"tps": 400.0,' wide.json && grep -q '"max_tps": 999.0' wide.json || fail "wide.json not made"

out=$("$APPSIM" compare slow.json wide.json fast.json)
echo "$out"
grep -Eq '^metric +Fast Drive +Wide Drive +Slow Drive$' <<<"$out" || fail "not ranked by service-level TPS"
grep -Eq '^service-level TPS \(p99 <= 20 ms, new_order p90 <= 5 s\) +650.0 \* +400.0 \(61.5%\) +none met$' <<<"$out" ||
  fail "service-level row"
grep -Eq '^max TPS +812.4 \(81.3%\) +999.0 \* +300.0 \(30.0%\)$' <<<"$out" || fail "max TPS row"
grep -Eq '^rank \(runs\) +1 \(1\) +2 \(1\) +3 \(1\)$' <<<"$out" || fail "rank row"
grep -q '^service level: judged against p99 <= 20 ms, new_order p90 <= 5 s$' <<<"$out" || fail "limits line"
grep -q 'Slow Drive: no point of its curve met .* it ranks last on service-level TPS' <<<"$out" ||
  fail "the drive with no point within the limits is not named"

# CSV and JSON carry the row, the unmet drive with empty figures, and the limits.
"$APPSIM" compare --format csv slow.json fast.json >out.csv
grep -q '^1,tpcc,service_level.tps,"service-level TPS (p99 <= 20 ms, new_order p90 <= 5 s)",tps,Fast Drive,1,1,650,650,650,100,1$' out.csv ||
  { cat out.csv; fail "csv service-level row"; }
grep -q '^1,tpcc,service_level.tps,.*,tps,Slow Drive,2,1,,,,,0$' out.csv || fail "csv unmet row"
grep -q '^1,tpcc,curve.max_tps,max TPS,tps,Slow Drive,2,1,300,300,300,' out.csv || fail "csv max TPS"
"$APPSIM" compare --format json slow.json fast.json >out.json
python3 - out.json <<'PY' || fail "json"
import json, sys
t = json.load(open(sys.argv[1]))["tables"][0]
sl = t["service_level"]
assert sl["ranked"] is True and sl["limits"] == "p99 <= 20 ms, new_order p90 <= 5 s", sl
assert [l["limit_ms"] for l in sl["limits_list"]] == [20.0, 5000.0], sl
m = {x["id"]: x for x in t["metrics"]}
v = m["service_level.tps"]["values"]
assert v[0]["value"] == 650.0 and v[0]["best"] is True, v
assert v[1]["value"] is None and v[1]["unmet"] is True, v
assert m["curve.max_tps"]["values"][1]["value"] == 300.0
assert [d["label"] for d in t["drives"]] == ["Fast Drive", "Slow Drive"]
PY

# Different limits: one table, the service-level row unranked, the limits named.
out=$("$APPSIM" compare fast.json loose.json)
echo "$out"
grep -Eq '^service-level TPS \(limits differ, not ranked\) +650.0 +320.0$' <<<"$out" || fail "unranked row"
grep -q 'judged against different limits .*p99 <= 20 ms.*p99 <= 50 ms' <<<"$out" || fail "limits not named"
grep -q '^ranked by max TPS' <<<"$out" || fail "rank rule with different limits"

# A user-step curve without limits: its maximum is the highest step, no service level.
out=$("$APPSIM" compare users.json)
grep -Eq '^max TPS +1,480.0 \*$' <<<"$out" || fail "user steps max TPS"
! grep -q 'service' <<<"$out" || fail "service level without limits"

# Results without a curve: no new rows, the rank rule as before.
fx_result p1.json tpcc "Plain One" P1 10 2 $(fx_seq 100000 1000 40)
fx_result p2.json tpcc "Plain Two" P2 10 2 $(fx_seq 1000000 1000 10)
out=$("$APPSIM" compare p2.json p1.json)
! grep -Eq 'service|max TPS|none met' <<<"$out" || fail "plain results gained curve rows"
grep -q '^ranked by TPS; .* ordered by p99 latency, then mean latency' <<<"$out" || fail "plain rank rule"

# Report: a latency chart per drive with the limits; none for the plain results.
"$APPSIM" report fast.json slow.json p1.json p2.json -o report.html
for c in g1-oltp-1 g1-oltp-2; do
  grep -q "data-chart=\"$c\" data-xscale=\"linear\" data-yscale=\"log\"" report.html || fail "chart $c"
done
! grep -q 'data-chart="g2-oltp' report.html || fail "an OLTP chart for results without a curve"
[ "$(grep -o 'class="limit"[^>]*data-y="[^"]*"' report.html | grep -c 'data-y="0.02"')" = 2 ] ||
  fail "the p99 limit is not drawn on both charts"
grep -q 'data-hollow="true"' report.html || fail "unsustained points not drawn apart"
grep -q 'class="unmet" data-metric="service_level.tps" data-drive="Slow Drive">none met' report.html ||
  fail "summary cell of the unmet drive"
echo "compare_oltp_curve: ok"
