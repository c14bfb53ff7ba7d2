#!/usr/bin/env bash
# A reviewer's report end to end: two targets (two directories on the disk this test
# runs on, so one serial) each run the review battery's shape at a tiny size (tpcc,
# sysbench on SQLite and on LMDB, a replay curve, an io curve, a VDI storm:
# report_review.ini), then `appsim report` of the two suite directories is rendered in
# headless Chromium and a probe measures what is drawn: the summary table with both
# drives, the engine in every heading, every curve's lines monotone in rate, log axes
# wherever values span more than a decade (and only there), one colour per drive in
# every chart, the drives side by side. Skipped (77) when Chromium is absent.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}" "${APPSIM_SRC:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  echo "SKIPPED: chromium is not installed (Debian package chromium, in scripts/deps.sh)" >&2
  exit 77
fi

# A small desktop trace of our own (fio iolog v3, a 32 MiB footprint) for the replay
# curve and the VDI storm, so that neither lays out gigabytes.
python3 - "$APPSIM_TMP" <<'PY'
import random, sys
rnd = random.Random(7)
with open(f"{sys.argv[1]}/desk.log", "w") as f:
    f.write("fio version 3 iolog\n0 disk add\n0 disk open\n")
    t = 0
    for i in range(400):
        t += rnd.randint(100, 3000)
        off = rnd.randrange(0, 32 << 20, 4096); ln = 4096 * rnd.choice((1, 2, 4, 16))
        op = "read" if rnd.random() < 0.7 else "write"
        f.write(f"{t} disk {op} {off} {ln}\n")
    f.write(f"{t} disk close\n")
PY
mkdir -p a b
# The two targets one after the other would double the time: side by side instead.
for d in a b; do
  "$APPSIM" suite "$APPSIM_SRC/tests/integration/report_review.ini" --target "$PWD/$d" \
    -o "$PWD/r$d" --trace "$PWD/desk.log" >"suite-$d.txt" 2>&1 &
done
wait %1 || fail "suite a: $(tail -20 suite-a.txt)"
wait %2 || fail "suite b: $(tail -20 suite-b.txt)"
"$APPSIM" report ra rb -o report.html --title "two targets" 2>report.err \
  || fail "report: $(cat report.err)"
grep -q 'suite.json: a suite.s state file, not a result: skipped' report.err \
  || fail "suite.json not skipped with a note: $(cat report.err)"
# The same through compare, with the glob a user types.
"$APPSIM" compare ra/*.json rb/*.json >compare.txt 2>compare.err || fail "compare: $(cat compare.err)"
grep -q '^== [0-9]. sysbench (sqlite)$' compare.txt && grep -q '^== [0-9]. sysbench (lmdb)$' compare.txt \
  || fail "engines in headings: $(grep '^==' compare.txt)"

# Render with a probe (added to a copy; the report itself has no script).
python3 - <<'PY'
html = open("report.html").read()
probe = """<script>
(function(){
  var out = {charts: [], headings: [], summary: [], drives: [], swatches: {}};
  document.querySelectorAll('h2').forEach(function(h){ out.headings.push(h.textContent); });
  document.querySelectorAll('table.summary thead th').forEach(function(th){
    out.summary.push(th.textContent);
    var sw = th.querySelector('.swatch');
    if (sw) out.swatches[th.textContent] = getComputedStyle(sw).backgroundColor;
  });
  document.querySelectorAll('table.drives thead th').forEach(function(th){ out.drives.push(th.textContent); });
  document.querySelectorAll('svg.chart').forEach(function(svg){
    var r = svg.getBoundingClientRect(), items = [];
    svg.querySelectorAll('rect.bar, circle.pt').forEach(function(el){
      var b = el.getBoundingClientRect(), d = el.dataset, cs = getComputedStyle(el);
      items.push({k: el.tagName, s: d.series, c: d.cat || '', x: Number(d.x || 0),
        y: Number(d.value !== undefined ? d.value : d.y), cx: b.left + b.width / 2,
        fill: cs.fill, stroke: cs.stroke, w: b.width, h: b.height});
    });
    out.charts.push({id: svg.dataset.chart, xs: svg.dataset.xscale, ys: svg.dataset.yscale,
      w: r.width, page: document.documentElement.clientWidth, items: items});
  });
  var pre = document.createElement('pre'); pre.id = 'measure';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();
</script>"""
open("probe.html", "w").write(html.replace("</body>", probe + "</body>"))
PY
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$PWD/profile" \
  --window-size=1400,1000 --dump-dom "file://$PWD/probe.html" >dom.html 2>chromium.log \
  || fail "chromium: $(tail -5 chromium.log)"

python3 - <<'PY' || fail "the rendered report"
import html, json, re
dom = open("dom.html").read()
m = json.loads(html.unescape(re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S).group(1)))
drives = m["summary"][1:]
assert len(drives) == 2, ("two drive columns in the summary", m["summary"])
# Two directories on one disk ran the same workloads: two columns, told apart by path.
assert sorted(d.rstrip("]")[-2:] for d in drives) == ["/a", "/b"], drives
assert len(m["drives"]) == 3, ("the drives side by side", m["drives"])
heads = " | ".join(m["headings"])
for want in ("tpcc (sqlite)", "sysbench (sqlite)", "sysbench (lmdb)", "replay (", "io (", "vdi ("):
    assert want in heads, (want, heads)
colors = {d: m["swatches"][d] for d in drives}
assert len(set(colors.values())) == 2, colors
def drive_of(name):
    ds = [d for d in drives if name.startswith(d)]
    assert len(ds) == 1, (name, drives)
    return ds[0]
kinds = set()
for c in m["charts"]:
    assert c["w"] > 0.9 * c["page"] - 100, ("full width", c["id"], c["w"], c["page"])
    for it in c["items"]:
        d = drive_of(it["c"] if it["k"] == "rect" else it["s"])
        color = it["fill"] if it["fill"] not in ("none", "") else it["stroke"]
        assert color == colors[d], ("one colour per drive", c["id"], it, colors)
        assert it["w"] > 0 and it["h"] > 0, it
    ys = [it["y"] for it in c["items"] if it["y"] > 0]
    if "-curve-" in c["id"]:
        kinds.add("curve")
        series = {}
        for it in c["items"]:
            if " p99" not in it["s"] and "maximum-rate" not in it["s"]:
                series.setdefault(it["s"], []).append(it)
        assert len(series) == 2, (c["id"], list(series))
        for s, pts in series.items():
            # 50, 100 and 120 %; on a loaded machine a point may complete nothing
            # measurable (and is then not drawn), so at least two.
            assert len(pts) >= 2, (c["id"], s, pts)
            assert all(b["x"] > a["x"] and b["cx"] > a["cx"] for a, b in zip(pts, pts[1:])), \
                ("monotone in rate", c["id"], s, [(p["x"], p["cx"]) for p in pts])
        spans = max(ys) > 10 * min(ys)
        assert (c["ys"] == "log") == spans, ("log axis iff a decade", c["id"], c["ys"], min(ys), max(ys))
    if c["id"].endswith("-percentiles"):
        kinds.add("percentiles")
        assert c["ys"] == "log" and c["xs"] == "nines", c
    if c["id"].endswith("-latency"):
        spans = max(ys) > 10 * min(ys)
        assert (c["ys"] == "log") == spans, ("log latency bars iff a decade", c["id"], c["ys"])
assert kinds == {"curve", "percentiles"}, kinds
curves = [c["id"] for c in m["charts"] if "-curve-" in c["id"]]
assert len(curves) >= 3, ("replay, io and vdi curves", curves)
print("probe: %d charts, %d curves, drives %s" % (len(m["charts"]), len(curves), drives))
PY
echo "report_review: ok"
