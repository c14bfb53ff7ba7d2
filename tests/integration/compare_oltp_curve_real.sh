#!/usr/bin/env bash
# A real OLTP curve through `appsim compare` and `appsim report`: two tiny `sysbench run
# --curve --slo` results (two targets, a few seconds each) are ranked on their
# service-level TPS with the limits named, every figure of the service-level and max TPS
# rows is the result's own, and the report draws each drive's chart with its points at
# their achieved TPS and latency and the limit at 50 ms in the chart's unit.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
SHAPE=(--engine sqlite --tables 1 --table-size 2000)

for d in a b; do
  "$APPSIM" sysbench prepare "${SHAPE[@]}" --target "$APPSIM_TMP/$d" --quiet >/dev/null
  "$APPSIM" sysbench run "${SHAPE[@]}" --target "$APPSIM_TMP/$d" --threads 2 --sync off \
    --workload oltp_read_write --curve --curve-points 50,100 --point-warmup 0s \
    --point-duration 1s --slo 'p99<=50ms' --slo-refine 0 --quiet --json "$d.json" >/dev/null
  jq -e '(.curve.points | length) == 3 and .service_level.limits[0].limit_ms == 50' "$d.json" \
    >/dev/null || fail "$d.json: not a curve with the limit"
done

out=$("$APPSIM" compare --label A,B a.json b.json)
echo "$out"
grep -q '^service-level TPS (p99 <= 50 ms) ' <<<"$out" || fail "no service-level row"
grep -q '^service level: judged against p99 <= 50 ms$' <<<"$out" || fail "limits not named"
grep -q '^ranked by service-level TPS' <<<"$out" || fail "not ranked by service-level TPS"

# The rows carry the results' own figures, and the order follows them.
"$APPSIM" compare --label A,B --format json a.json b.json >cmp.json
python3 - cmp.json a.json b.json <<'PY' || fail "compare's figures are not the results'"
import json, sys
t = json.load(open(sys.argv[1]))["tables"][0]
res = {"A": json.load(open(sys.argv[2])), "B": json.load(open(sys.argv[3]))}
m = {x["id"]: x for x in t["metrics"]}
labels = [d["label"] for d in t["drives"]]
sl = []
for i, lab in enumerate(labels):
    want = res[lab]["service_level"]["tps"]
    got = m["service_level.tps"]["values"][i]
    if want is None:
        assert got["unmet"] is True and got["value"] is None, (lab, got)
    else:
        assert abs(got["value"] - want) < 1e-6, (lab, got, want)
    assert abs(m["curve.max_tps"]["values"][i]["value"] - res[lab]["curve"]["max_tps"]) < 1e-6
    sl.append(want)
assert t["service_level"]["ranked"] is True and t["service_level"]["limits"] == "p99 <= 50 ms"
# rank 1 serves at least as much within the limits (1 % counts as a tie), or both none
if sl[1] is not None:
    assert sl[0] is not None and sl[0] >= 0.99 * sl[1], sl
PY

"$APPSIM" report --label A,B a.json b.json -o report.html
python3 - report.html a.json b.json <<'PY' || fail "the report's curve charts"
import json, re, sys
html = open(sys.argv[1]).read()
scale = {"us": 1e3, "ms": 1.0, "s": 1e-3}
for n in (1, 2):
    m = re.search(r'<svg class="chart" data-chart="g1-oltp-%d"[^>]*data-yscale="log" '
                  r'data-yunit="(\w+)".*?</svg>' % n, html, re.S)
    assert m, "chart %d" % n
    svg, k = m.group(0), scale[m.group(1)]
    title = re.search(r"<title>(\w+): latency", svg).group(1)
    doc = json.load(open(sys.argv[2] if title == "A" else sys.argv[3]))
    limit = [float(y) for y in re.findall(r'class="limit"[^>]*data-y="([^"]+)"', svg)]
    assert len(limit) == 1 and abs(limit[0] - 50 * k) < 1e-9 * max(1, k), limit
    pts = [p for p in doc["curve"]["points"] if not p.get("max_rate_run")]
    pts.sort(key=lambda p: p["offered_tps"])
    drawn = re.findall(r'data-series="mean" data-x="([^"]+)" data-y="([^"]+)"', svg)
    assert len(drawn) == len(pts), (drawn, pts)
    for (x, y), p in zip(drawn, pts):
        assert abs(float(x) - p["achieved_tps"]) < 1e-6 * p["achieved_tps"], (x, p)
        assert abs(float(y) - p["latency_ms"]["mean"] * k) < 1e-6 * float(y), (y, p)
    hollow = len(re.findall(r'data-hollow="true" data-series="mean"', svg))
    assert hollow == sum(1 for p in pts if not p["sustained"]), hollow
PY
echo "compare_oltp_curve_real: ok"
