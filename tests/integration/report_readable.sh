#!/usr/bin/env bash
# `appsim report` reads as a reviewer publishes it: latency charts in a unit chosen from
# their values (never an axis to millions of microseconds), the rate curves on a log IOPS
# axis when the drives are ten times apart and no point is at 0 IOPS (and only then), the
# drives and the configurations as tables of named rows (sizes in binary units, flags yes
# or no, one em dash for a missing value, no key paths or JSON), a run reported in one
# long interval drawn as a line beside a run reported every second, table latencies in ms.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Results of two drives: io curves (fast: 100,000 IOPS; slow: 5,000 IOPS, its overload
# at 2.4 s p99; "near": 2x the slow one) and tpcc runs (fast reported every second, slow
# in one 10-s interval), with identities and configurations as appsim records them.
python3 - <<'PY'
import json
def target(serial, model, cap):
    return {"path": "/mnt/" + serial, "realpath": "/mnt/" + serial, "kind": "directory",
            "direct_io": True, "available_bytes": 80 << 30,
            "filesystem": {"type": "ext4", "mount_point": "/mnt/" + serial,
                           "source": "/dev/" + serial, "size_bytes": 500 << 30,
                           "free_bytes": 80 << 30, "block_size": 4096},
            "partition": None,
            "device": {"name": serial, "path": "/dev/" + serial, "model": model,
                       "serial": serial, "firmware": None, "capacity_bytes": 512 << 30,
                       "rotational": False, "logical_block_size": 512,
                       "unknown": ["firmware"]}}
host = {"cpu": "Test CPU", "cores": 8, "memory_bytes": 32 << 30, "kernel": "6.1"}
def io(name, serial, model, peak, lat_us):
    pts = [{"fraction": 0, "max_rate_run": True, "iops": peak * 1.01,
            "mean_us": lat_us * 4, "p99_us": lat_us * 12}]
    for f, m in ((0.5, 1), (1.0, 2), (1.2, 1500)):
        pts.append({"fraction": f, "target_iops": peak * f, "offered_iops": peak * f,
                    "iops": peak * min(f, 1.0), "saturated": f > 1,
                    "mean_us": lat_us * m, "p99_us": lat_us * m * 4})
    doc = {"schema": "appsim-result/1", "tool": {"name": "appsim", "version": "t"},
           "command": "appsim io --curve", "workload": "io",
           "config": {"profile": "4k-random-read", "file-size": 1 << 30, "warmup": 1.0,
                      "duration": 2.0, "curve": True},
           "host": host, "target": target(serial, model, 512), "interrupted": False,
           "started_at": "2026-12-01T00:00:00Z",
           "profiles": [{"profile": "4k-random-read", "curve": {"points": pts}}]}
    json.dump(doc, open(name, "w"))
def tpcc(name, serial, model, step):
    iv = [{"t": float(t), "seconds": float(step), "phase": "measure", "rate": 100.0,
           "latency_us": {"p99_us": 8000.0 + 100 * t}} for t in range(step, 11, step)]
    doc = {"schema": "appsim-result/1", "tool": {"name": "appsim", "version": "t"},
           "command": "appsim tpcc", "workload": "tpcc",
           "config": {"scale": 2, "buffer": 64 << 20, "duration": 10.0, "warmup": 30.0,
                      "report-interval": float(step)},
           "host": host, "target": target(serial, model, 512), "interrupted": False,
           "started_at": "2026-12-01T00:00:00Z", "intervals": iv,
           "summary": {"unit": "tps", "tps": 100.0, "count": 1000, "errors": 0,
                       "seconds": 10.0, "latency_us": {"count": 1000, "mean_us": 2500.0,
                                                       "p99_us": 9000.0}}}
    json.dump(doc, open(name, "w"))
io("io-fast.json", "F1", "Fast Drive", 100000, 50)
io("io-slow.json", "S1", "Slow Drive", 5000, 400)
io("io-near.json", "N1", "Near Drive", 10000, 200)
# a drive whose 50 % point completed nothing: a log axis could not show it
io("io-stalled.json", "Z1", "Stalled Drive", 5000, 400)
d = json.load(open("io-stalled.json"))
d["profiles"][0]["curve"]["points"][1]["iops"] = 0
json.dump(d, open("io-stalled.json", "w"))
tpcc("tpcc-fast.json", "F1", "Fast Drive", 1)
tpcc("tpcc-slow.json", "S1", "Slow Drive", 10)
PY
"$APPSIM" report io-fast.json io-slow.json tpcc-fast.json tpcc-slow.json -o apart.html \
  2>err.txt || fail "report: $(cat err.txt)"
"$APPSIM" report io-slow.json io-near.json -o near.html 2>err.txt || fail "report: $(cat err.txt)"
"$APPSIM" report io-fast.json io-stalled.json -o stalled.html 2>err.txt || fail "report: $(cat err.txt)"

python3 - <<'PY' || fail "the report's charts and tables"
import html, re
def charts(doc):
    out = {}
    for m in re.finditer(r'<svg class="chart" data-chart="([^"]+)"([^>]*)>(.*?)</svg>', doc, re.S):
        attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', m.group(2)))
        out[m.group(1)] = (attrs, m.group(3))
    return out
apart, near = open("apart.html").read(), open("near.html").read()
ca, cn = charts(apart), charts(near)
# Latency charts: the unit is named and chosen so that no tick passes 1,000.
lat = [c for c in list(ca.items()) + list(cn.items()) if c[1][0].get("yunit")]
assert len(lat) >= 4, [c[0] for c in lat]
for cid, (attrs, body) in lat:
    assert attrs["yunit"] in ("us", "ms", "s"), (cid, attrs)
    ticks = [float(t.replace(",", "")) for t in
             re.findall(r'<text class="tick"[^>]*text-anchor="end">([-0-9.,]+)</text>', body)]
    assert ticks and max(ticks) <= 1000, (cid, attrs["yunit"], ticks)
assert "10,000,000" not in apart
# The slow drive's overload (2.4 s p99 at 120 %) puts the curve chart in seconds.
curve_a = [c for c in ca if "-curve-" in c]
assert len(curve_a) == 1 and ca[curve_a[0]][0]["yunit"] == "s", (curve_a, ca[curve_a[0]][0])
# Rate curves: log IOPS 20x apart, linear 2x apart.
assert ca[curve_a[0]][0]["xscale"] == "log", ca[curve_a[0]][0]
curve_n = [c for c in cn if "-curve-" in c]
assert len(curve_n) == 1 and cn[curve_n[0]][0]["xscale"] == "linear", cn[curve_n[0]][0]
# 20x apart, but a point at 0 IOPS: linear, and the point is drawn.
cs = charts(open("stalled.html").read())
curve_s = [c for c in cs if "-curve-" in c]
assert len(curve_s) == 1 and cs[curve_s[0]][0]["xscale"] == "linear", cs[curve_s[0]][0]
assert re.search(r'class="pt"[^>]*data-series="Stalled Drive" data-x="0"', cs[curve_s[0]][1]), "0 IOPS not drawn"
# The run reported in one 10-s interval is a line from 0 to 10 s, as wide as the
# other run's ten 1-s steps.
rt = [c for c in ca if c.endswith("-rate-time")]
assert len(rt) == 1, list(ca)
lines = {s: pts.split() for s, pts in
         re.findall(r'<polyline class="line"[^>]*data-series="([^"]+)" points="([^"]*)"', ca[rt[0]][1])}
slow = [p for s, p in lines.items() if "Slow" in s][0]
fast = [p for s, p in lines.items() if "Fast" in s][0]
assert len(slow) == 2, ("one interval drawn as a line", slow)
x = lambda p: float(p.split(",")[0])
assert abs(x(slow[0]) - x(fast[0])) < 0.5 and abs(x(slow[-1]) - x(fast[-1])) < 0.5, (slow, fast)
# Tables: latencies in ms; the drives and configurations as named rows.
assert "p99 latency (ms)" in apart and "(us)" not in apart.split("<svg")[0]
sec = lambda name: apart[apart.index('<section id="%s"' % name):].split("</section>")[0]
drives, configs = sec("drives"), sec("configs")
rows = lambda s: {html.unescape(re.sub("<[^>]+>", "", k)): [html.unescape(re.sub("<[^>]+>", "", v)) for v in re.findall(r"<td[^>]*>(.*?)</td>", r)]
                  for k, r in re.findall(r"<tr><th>(.*?)</th>(.*?)</tr>", s, re.S)}
d, c = rows(drives), rows(configs)
assert d["capacity"] == ["512 GiB", "512 GiB"], d.get("capacity")
assert d["memory"] == ["32 GiB", "32 GiB"], d.get("memory")
assert d["firmware"] == ["\u2014", "\u2014"], d.get("firmware")
assert d["partition"] == ["\u2014", "\u2014"], d.get("partition")
assert d["model"] == ["Fast Drive", "Slow Drive"], d.get("model")
assert d["rotational"] == ["no", "no"], d.get("rotational")
assert c["buffer"] == ["64 MiB", "64 MiB"], c.get("buffer")
assert c["warmup"] == ["30 s", "30 s"] and c["file-size"] == ["1 GiB", "1 GiB"], c
for s in (drives, configs):
    assert not re.search(r"(target|host|config)\.[a-z]", s), "a key path in %s" % s[:200]
    assert "{" not in s and "null" not in s and "true" not in s, s[:300]
assert "<td>-</td>" not in apart, "a hyphen for a missing value"
PY
echo "report_readable: ok"
