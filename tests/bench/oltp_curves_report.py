#!/usr/bin/env python3
"""tests/bench/oltp_curves_report.py: the Markdown section of the OLTP curves on several
drives (tests/bench/oltp_curves.sh OUT_DIR makes OUT_DIR/WORKLOAD-DRIVE.json and
OUT_DIR/meta.json).

usage: tests/bench/oltp_curves_report.py OUT_DIR [--tolerance PCT] [--p99-noise PCT]
           [--p99-noise-ms MS] > section.md

Every result file in OUT_DIR with a `curve` section counts (meta.json, when present,
names the drives, their order and the settings; without it a file's name is its drive).
Per workload: a table per drive (every point: offered and achieved TPS, sustained, within
the limits, mean and p99 latency), a ranking table (saturation TPS, service-level TPS and
the order of both) and three checks, each computed from the results:
  - the drives in the same order by service-level TPS as by saturation TPS: no pair
    that saturation separates reversed (a drive whose curve met no limit ranks below
    every drive with a figure; two that met none, or equal figures, are a tie);
  - below the knee (open-loop points at offered rates under the lowest one that was not
    sustained), every point achieved its offered rate within --tolerance (2 %); and,
    since negative-exponential arrivals over a short point vary around the offered rate
    by about 1 / sqrt(arrivals) (10 % at 100), whether the drive kept up: every such
    point achieved the rate of the arrivals drawn within --tolerance, and those lay
    within 3 standard deviations of the offered rate's expectation (with uniform
    arrivals the two checks are one);
  - p99 latency non-decreasing with the offered rate (open-loop points in order of
    offered rate) within a noise allowance: a point's p99 may lie below the previous
    one's by at most --p99-noise percent (25) or --p99-noise-ms (1 ms), whichever is more.
Exit status 2 when OUT_DIR holds no curve result; the checks' verdicts do not change it.
"""
import argparse
import glob
import json
import math
import os
import sys


def load(out_dir):
    meta = {}
    path = os.path.join(out_dir, "meta.json")
    if os.path.exists(path):
        with open(path) as f:
            meta = json.load(f)
    curves = {}  # workload -> {drive: result}
    for path in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
        if os.path.basename(path) == "meta.json":
            continue
        try:
            with open(path) as f:
                res = json.load(f)
        except (OSError, ValueError) as e:
            print(f"skipping {path}: {e}", file=sys.stderr)
            continue
        if not isinstance(res, dict) or not res.get("curve"):
            continue
        wl = res.get("workload", "?")
        stem = os.path.basename(path)[:-len(".json")]
        drive = stem[len(wl) + 1:] if stem.startswith(wl + "-") else stem
        curves.setdefault(wl, {})[drive] = res
    return meta, curves


def fmt(x, digits=1):
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def ms(x):
    if x is None:
        return "-"
    return fmt(x, 2) if x < 10 else fmt(x, 1)


def limit_text(limits):
    parts = []
    for lim in limits or []:
        p = lim.get("percentile")
        pname = "p" + (f"{p:g}".replace(".", "") if p is not None else "?")
        who = f"{lim['type']} " if lim.get("type") else ""
        src = f" ({lim['source']})" if lim.get("source") and lim["source"] != "--slo" else ""
        parts.append(f"{who}{pname} <= {lim.get('limit_ms', 0):g} ms{src}")
    return ", ".join(parts) if parts else "none"


def usable(pt):
    return not pt.get("interrupted") and not pt.get("failed")


def open_points(res):
    """Open-loop points not cut short, in order of offered rate."""
    pts = [p for p in res["curve"]["points"]
           if not p.get("closed_loop") and p.get("offered_tps") is not None and usable(p)]
    return sorted(pts, key=lambda p: p["offered_tps"])


def saturation(res):
    c = res["curve"]
    if c.get("max_tps") is not None:
        return c["max_tps"]
    done = [p["achieved_tps"] for p in c["points"] if usable(p) and p.get("achieved_tps") is not None]
    return max(done) if done else None


def service_tps(res):
    return (res.get("service_level") or {}).get("tps")


def point_label(p, listed):
    if p.get("max_rate_run"):
        return "saturation"
    if p.get("percent") is not None:
        extra = "" if listed is None or f"{p['percent']:g}" in listed else " (bisection)"
        return f"{p['percent']:g} %{extra}"
    if p.get("closed_loop"):
        return f"{p.get('vusers')} users"
    return "-"


def drive_table(res):
    listed = None
    cp = (res.get("config") or {}).get("curve-points")
    if isinstance(cp, str):
        listed = set(cp.split(","))
    rows = ["| # | point | offered TPS | achieved TPS | achieved / offered | sustained | "
            "within limits | mean ms | p99 ms |", "|---|---|---|---|---|---|---|---|---|"]
    pts = res["curve"]["points"]
    order = sorted(pts, key=lambda p: (not p.get("closed_loop"), p.get("offered_tps") or 0, p["index"]))
    for p in order:
        off, ach = p.get("offered_tps"), p.get("achieved_tps")
        ratio = f"{100 * ach / off:.1f} %" if off and ach is not None else "-"
        lat = p.get("latency_ms") or {}
        sus = "yes" if p.get("sustained") else "**no**"
        if p.get("interrupted") or p.get("failed"):
            sus += " (cut short)" if p.get("interrupted") else " (failed)"
        met = p.get("slo_met")
        met = "-" if met is None else ("yes" if met else "no")
        rows.append(f"| {p['index']} | {point_label(p, listed)} | {fmt(off)} | {fmt(ach)} | {ratio} | "
                    f"{sus} | {met} | {ms(lat.get('mean'))} | {ms(lat.get('p99'))} |")
    return rows


def rank(drives, value):
    """Drive names by value, highest first; None last (in the given order)."""
    with_v = sorted([d for d in drives if value(d) is not None], key=lambda d: -value(d))
    return with_v + [d for d in drives if value(d) is None]


def place(drives, value, d):
    """d's rank by value (1 = highest); equal values, and drives without one, share a rank."""
    v = value(d)
    return 1 + sum(1 for e in drives if value(e) is not None and (v is None or value(e) > v))


def check_order(drives, res, differ):
    """Every pair of drives that saturation separates is in the same order by service
    level (a drive with none ranks below every one with a figure); ties are not
    reversals."""
    sat = lambda d: saturation(res[d])  # noqa: E731
    sl = lambda d: service_tps(res[d])  # noqa: E731
    by_sat, by_sl = rank(drives, sat), rank(drives, sl)
    reversed_pairs = []
    for a in drives:
        for b in drives:
            if sat(a) is None or sat(b) is None or sat(a) <= sat(b):
                continue
            if sl(b) is not None and (sl(a) is None or sl(a) < sl(b)):
                reversed_pairs.append(f"{a}/{b}")
    ok = not reversed_pairs and not differ
    text = (f"saturation: {' > '.join(f'{d} {fmt(sat(d))}' for d in by_sat)}; "
            f"service level: {' > '.join(f'{d} ' + (fmt(sl(d)) if sl(d) is not None else 'none met') for d in by_sl)}")
    if reversed_pairs:
        text += f"; reversed: {', '.join(reversed_pairs)}"
    if differ:
        text += f"; not comparable: {', '.join(differ)} judged against other limits"
    return ok, text


def knee(res):
    """The lowest offered rate whose point was not sustained (None: every point was)."""
    bad = [p["offered_tps"] for p in open_points(res) if not p.get("sustained")]
    return min(bad) if bad else None


def point_seconds(p, res):
    return p.get("measured_s") or res["curve"].get("point_duration_s")


def arrivals_z(p, res):
    """How many standard deviations of a Poisson count the arrivals drawn lie from the
    offered rate's expectation (None without the count)."""
    ol = p.get("open_loop") or {}
    secs = point_seconds(p, res)
    if ol.get("arrivals") is None or not secs:
        return None
    n = p["offered_tps"] * secs
    return (ol["arrivals"] - n) / math.sqrt(n) if n > 0 else None


def check_achieved(drives, res, tol):
    """(literal, drive kept up, lines): literal = every sustained point below the knee
    achieved its offered rate within tol %; kept up = within tol % of the arrivals drawn,
    and those within 3 standard deviations of the offered rate's Poisson expectation."""
    if not any(open_points(res[d]) for d in drives):
        return None, None, ["no open-loop points (user steps only)"]
    ok, ok_arr, parts = True, True, []
    for d in drives:
        k = knee(res[d])
        below = [p for p in open_points(res[d]) if (k is None or p["offered_tps"] < k) and p.get("sustained")]
        if not below:
            parts.append(f"{d}: no sustained point below the knee")
            ok = ok_arr = False
            continue
        dev_off = [100 * (p["achieved_tps"] - p["offered_tps"]) / p["offered_tps"] for p in below]
        fails = sum(abs(x) > tol for x in dev_off)
        i = max(range(len(below)), key=lambda j: abs(dev_off[j]))
        knee_t = f"knee at {fmt(k)} offered" if k is not None else "no knee (every point sustained)"
        line = (f"{d}: {len(below)} points below the {knee_t}; against the offered rate {fails} outside "
                f"{tol:g} %, largest {dev_off[i]:+.2f} % ({point_label(below[i], None)}: "
                f"{fmt(below[i]['achieved_tps'])} of {fmt(below[i]['offered_tps'])})")
        ok = ok and fails == 0
        dev_arr, zs = [], []
        for p in below:
            arr = (p.get("open_loop") or {}).get("arrived_tps")
            z = arrivals_z(p, res[d])
            if arr and z is not None:
                dev_arr.append(100 * (p["achieved_tps"] - arr) / arr)
                zs.append(z)
        if len(dev_arr) == len(below):
            fails_a = sum(abs(x) > tol for x in dev_arr) + sum(abs(z) > 3 for z in zs)
            ok_arr = ok_arr and fails_a == 0
            line += (f"; against the arrivals drawn largest {max(dev_arr, key=abs):+.2f} %, the arrivals "
                     f"at most {max(zs, key=abs):+.1f} standard deviations from the offered rate")
        else:
            ok_arr = False
            line += "; the results do not give the arrivals drawn"
        parts.append(line)
    return ok, ok_arr, parts


def check_p99(drives, res, noise_pct, noise_ms):
    ok, parts = True, []
    if not any(open_points(res[d]) for d in drives):
        return None, ["no open-loop points (user steps only)"]
    for d in drives:
        pts = [p for p in open_points(res[d]) if (p.get("latency_ms") or {}).get("p99") is not None]
        seq = " -> ".join(f"{ms(p['latency_ms']['p99'])}" for p in pts)
        drops = []
        for a, b in zip(pts, pts[1:]):
            pa, pb = a["latency_ms"]["p99"], b["latency_ms"]["p99"]
            allowed = max(pa * noise_pct / 100, noise_ms)
            if pa - pb > allowed:
                drops.append(f"{point_label(a, None)} {ms(pa)} ms -> {point_label(b, None)} {ms(pb)} ms "
                             f"({100 * (pb - pa) / pa:+.0f} %)")
        ok = ok and not drops
        parts.append(f"{d}: p99 ms by offered rate {seq}" + (f"; drops beyond the allowance: {'; '.join(drops)}"
                                                              if drops else "; no drop beyond the allowance"))
    return ok, parts


def yes(ok):
    return "not applicable" if ok is None else ("**yes**" if ok else "**no**")


def word(ok):
    return "n/a" if ok is None else ("yes" if ok else "no")


def own_timing(r, first_curve):
    """A drive's point timing when it differs from the section's first drive."""
    c = r["curve"]
    if (c.get("point_warmup_s"), c.get("point_duration_s")) == (first_curve.get("point_warmup_s"),
                                                               first_curve.get("point_duration_s")):
        return ""
    return f"; each point {c.get('point_warmup_s'):g} s warm-up + {c.get('point_duration_s'):g} s measured"


def section(wl, res, meta, args):
    order = [d for d in meta.get("drive_order", []) if d in res] + sorted(d for d in res if d not in meta.get("drive_order", []))
    out = [f"### {wl}", ""]
    m = meta.get(wl) or {}
    first = res[order[0]]
    c = first["curve"]
    shape = ""
    if wl == "tpcc" and m:
        shape = f"scale {m.get('scale')}, buffer {m.get('buffer')}, "
    elif wl == "sysbench" and m:
        shape = (f"{m.get('workload')} on {m.get('engine')}, {m.get('tables')} tables x {m.get('table_size'):,} rows, "
                 f"--rand-type {m.get('rand_type')}, buffer {m.get('buffer')}, ")
    threads = meta.get("threads")
    if threads is None:
        cfg = first.get("config") or {}
        threads = cfg.get("connections", cfg.get("threads", c["points"][0].get("vusers")))
    out.append(f"{shape}{threads} connections; each point {c.get('point_warmup_s'):g} s warm-up + "
               f"{c.get('point_duration_s'):g} s measured, arrivals {c.get('arrivals')}; "
               f"limits: {limit_text((first.get('service_level') or {}).get('limits'))}.")
    differ = [d for d in order if limit_text((res[d].get("service_level") or {}).get("limits"))
              != limit_text((first.get("service_level") or {}).get("limits"))]
    if differ:
        out.append(f"Judged against other limits: {', '.join(differ)} (their service levels do not compare).")
    out.append("")
    for d in order:
        desc = (meta.get("drives") or {}).get(d)
        out.append(f"**{d}**" + (f" ({desc})" if desc else "") + f": saturation {fmt(saturation(res[d]))} TPS, "
                   f"service level {fmt(service_tps(res[d])) if service_tps(res[d]) is not None else 'none met'}"
                   + (" (refined)" if (res[d].get("service_level") or {}).get("refined") else "")
                   + own_timing(res[d], c))
        out.append("")
        out += drive_table(res[d])
        out.append("")
    ok_o, text_o = check_order(order, res, differ)
    out += ["| drive | saturation TPS | service-level TPS | rank by saturation | rank by service level |",
            "|---|---|---|---|---|"]
    for d in order:
        sl = service_tps(res[d])
        out.append(f"| {d} | {fmt(saturation(res[d]))} | {fmt(sl) if sl is not None else 'none met'} | "
                   f"{place(order, lambda e: saturation(res[e]), d)} | "
                   f"{place(order, lambda e: service_tps(res[e]), d)} |")
    out.append("")
    ok_a, ok_arr, parts_a = check_achieved(order, res, args.tolerance)
    ok_p, parts_p = check_p99(order, res, args.p99_noise, args.p99_noise_ms)
    out.append(f"- Service-level TPS in the order of saturation TPS: {yes(ok_o)} ({text_o}).")
    out.append(f"- Achieved within {args.tolerance:g} % of offered below the knee: {yes(ok_a)}; the drive kept up "
               f"(achieved within {args.tolerance:g} % of the arrivals drawn, which lie within 3 standard "
               f"deviations of the offered rate): {yes(ok_arr)}.")
    out += [f"  - {p}" for p in parts_a]
    out.append(f"- p99 non-decreasing with the offered rate (a drop of at most {args.p99_noise:g} % or "
               f"{args.p99_noise_ms:g} ms allowed as noise): {yes(ok_p)}.")
    out += [f"  - {p}" for p in parts_p]
    out.append("")
    return out, (ok_o, ok_a, ok_arr, ok_p)


def main():
    ap = argparse.ArgumentParser(description="Markdown section of tests/bench/oltp_curves.sh's results")
    ap.add_argument("out_dir")
    ap.add_argument("--tolerance", type=float, default=2.0, help="achieved vs offered, percent (2)")
    ap.add_argument("--p99-noise", type=float, default=25.0, help="allowed p99 drop, percent (25)")
    ap.add_argument("--p99-noise-ms", type=float, default=1.0, help="allowed p99 drop, ms (1)")
    args = ap.parse_args()
    if not os.path.isdir(args.out_dir):
        print(f"{args.out_dir}: not a directory (give tests/bench/oltp_curves.sh's OUT_DIR)", file=sys.stderr)
        return 2
    meta, curves = load(args.out_dir)
    if not curves:
        print(f"{args.out_dir}: no result with a curve in it", file=sys.stderr)
        return 2
    drives = {d for r in curves.values() for d in r}
    lines = [f"## OLTP curves and service-level throughput on {len(drives)} drive{'s' if len(drives) > 1 else ''}", ""]
    if meta:
        lines.append(f"Measured {meta.get('date')} on {meta.get('machine')}; made by "
                     f"`{meta.get('command')}` (points {meta.get('curve_points')} % of saturation, "
                     f"up to {meta.get('slo_refine')} bisection points), this section by "
                     f"`tests/bench/oltp_curves_report.py OUT_DIR`.")
        lines.append("")
    verdicts = []
    for wl in sorted(curves, key=lambda w: (w != "tpcc", w)):
        sec, v = section(wl, curves[wl], meta, args)
        lines += sec
        verdicts.append((wl, v))
    lines += ["| workload | service-level order = saturation order | achieved within "
              f"{args.tolerance:g} % of offered below the knee | within {args.tolerance:g} % of the arrivals "
              "drawn | p99 non-decreasing |", "|---|---|---|---|---|"]
    for wl, v in verdicts:
        lines.append(f"| {wl} | " + " | ".join(word(x) for x in v) + " |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
