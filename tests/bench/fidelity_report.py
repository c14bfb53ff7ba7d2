#!/usr/bin/env python3
"""tests/bench/fidelity_report.py: writes docs/fidelity.md from the fidelity harness's
results (tests/bench/fidelity.sh OUT_DIR makes OUT_DIR/results.jsonl).

usage: tests/bench/fidelity_report.py RESULTS.jsonl... [--command TEXT] [--title TEXT]
           [--note TEXT] [--no-intro] > docs/fidelity.md
(--title names the measurements' section; --no-intro leaves out fidelity_intro.md, for a
second section appended to the page.)

Several result files may be given (a pass and a repetition of some of its runs): where
an engine, drive, regime and cache ratio were measured more than once, the better run
counts (more TPS, or less mean latency at the same offered load), since other work on
the machine only ever slows a run; the page says which runs were repeated.

Every figure in the page comes from the results file; the verdicts (rank order, ratio
bands, per-transaction I/O between the peers or within 1.5x of the nearer) are computed here, the same way each
time the page is made.
"""
import json
import sys

PEERS = ("postgres", "innodb")
APPSIM = ("appsim", "appsim-lmdb")
NAMES = {"postgres": "PostgreSQL 15", "innodb": "MariaDB 10.11 InnoDB",
         "appsim": "appsim (SQLite)", "appsim-lmdb": "appsim (LMDB)"}
DRIVE_ORDER = ("ram", "disk", "slowr", "sloww", "bw", "qd4")
BAND = 1.5
SUMMARY = []  # (workload, regime, metric label, appsim engine, rank agrees, disagreements, [in band, of])
IO_SUMMARY = []  # (workload, cache ratio, regime, appsim engine, quantities within 1.5x, of)


REPEATED = set()  # keys measured more than once: the better run is kept


def better(a, b):
    """Of two runs of the same engine, drive and regime, the one that served more (regime
    1) or waited less (regime 2): other work on the machine only ever slows a run."""
    if a["regime"] == 1:
        return a if a["tps"] >= b["tps"] else b
    return a if a["mean_ms"] <= b["mean_ms"] else b


def load(paths):
    runs = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                key = (r["workload"], r["regime"], r["cache_ratio"], r["drive"], r["engine"])
                if key in runs:
                    REPEATED.add(key)
                    r = better(runs[key], r)
                runs[key] = r
    return runs


def fmt(x, digits=3):
    if x is None:
        return "—"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def engines_of(runs, wl):
    present = {k[4] for k in runs if k[0] == wl}
    return [e for e in PEERS + APPSIM if e in present]


def drives_of(runs, wl, regime, ratio):
    present = {k[3] for k in runs if k[0] == wl and k[1] == regime and k[2] == ratio}
    return [d for d in DRIVE_ORDER if d in present]


def order(values):
    """Drives from best to worst by value (higher is better)."""
    return [d for d, _ in sorted(values.items(), key=lambda kv: -kv[1])]


TIE = 0.10  # two drives within 10 % of each other are a tie: run-to-run noise orders them


def separated(x, y):
    return abs(x - y) > TIE * max(abs(x), abs(y))


def rank_agrees(app, peers):
    """Every pair of drives that both peers separate (beyond TIE) in the same direction is
    ordered that way by appsim, or is a tie for appsim too; pairs the peers disagree on or
    tie are not held against it. Returns (agrees, disagreements)."""
    bad = []
    drives = list(app)
    for i, a in enumerate(drives):
        for b in drives[i + 1:]:
            both = [p for p in peers if a in p and b in p]
            if len(both) < len(peers) or not all(separated(p[a], p[b]) for p in both):
                continue
            votes = {p[a] > p[b] for p in both}
            if len(votes) != 1:
                continue
            if separated(app[a], app[b]) and (app[a] > app[b]) != votes.pop():
                bad.append(f"{a}/{b}")
    return not bad, bad


def in_band(x, peer_values):
    """Within BAND of the nearer peer's value, or between the peers' values."""
    vals = [v for v in peer_values if v is not None and v > 0]
    if x is None or x <= 0 or not vals:
        return None
    if min(vals) <= x <= max(vals):
        return True
    return min(max(x / v, v / x) for v in vals) <= BAND


def verdict_label(a, apps):
    """The appsim engine's short name before its verdict ("SQLite "), where a table has
    more than one appsim engine; nothing where it has one."""
    return "" if len(apps) < 2 else NAMES[a].split("(")[1][:-1] + " "


def ratio_table(out, runs, wl, regime, ratio, metric, label, better_high):
    engs = engines_of(runs, wl)
    drives = drives_of(runs, wl, regime, ratio)
    if "disk" not in drives:
        return
    base = {e: runs.get((wl, regime, ratio, "disk", e)) for e in engs}
    out.append(f"| drive | " + " | ".join(NAMES[e] for e in engs) + " | appsim in band |")
    out.append("|---|" + "---|" * (len(engs) + 1))
    per_engine = {e: {} for e in engs}
    band = {}
    for d in drives:
        cells, ratios = [], {}
        for e in engs:
            r = runs.get((wl, regime, ratio, d, e))
            if r is None or base[e] is None or not base[e][metric]:
                cells.append("—")
                continue
            v = r[metric]
            q = v / base[e][metric] if base[e][metric] else None
            ratios[e] = q
            per_engine[e][d] = v if better_high else -v
            extra = f" at {fmt(r['tps'])} TPS" if metric != "tps" else ""
            cells.append(f"{fmt(v)}{extra} ({fmt(q)})" if d != "disk" else f"{fmt(v)}{extra}")
        verdicts = []
        for a in (e for e in APPSIM if e in ratios):
            if d == "disk":
                continue
            ok = in_band(ratios[a], [ratios.get(p) for p in PEERS])
            if ok is not None:
                band[a] = band.get(a, [0, 0])
                band[a][0] += bool(ok)
                band[a][1] += 1
            short = verdict_label(a, [e for e in APPSIM if e in engs])
            verdicts.append(f"{short}{'yes' if ok else 'no' if ok is not None else '—'}")
        out.append(f"| {d} | " + " | ".join(cells) + " | " + (", ".join(verdicts) or "—") + " |")
    out.append("")
    peers = [per_engine[p] for p in PEERS if per_engine.get(p)]
    ords = " / ".join(f"{NAMES[e]}: {' > '.join(order(per_engine[e]))}" for e in engs if per_engine[e])
    out.append(f"Order by {label} ({'higher' if better_high else 'lower'} is better): {ords}.")
    out.append("")
    for a in (e for e in APPSIM if per_engine.get(e)):
        ok, bad = rank_agrees(per_engine[a], peers)
        out.append(f"- {NAMES[a]} orders every pair of drives that both peers separate by more than "
                   f"{TIE:.0%} the way they do: "
                   f"**{'yes' if ok else 'no (' + ', '.join(bad) + ')'}**; its ratio to the disk is in "
                   f"band on {band.get(a, [0, 0])[0]} of {band.get(a, [0, 0])[1]} drives.")
        SUMMARY.append((wl, regime, label, a, ok, bad, band.get(a, [0, 0])))
    out.append("")


CPU_BOUND = 0.9  # share of the machine's cores busy at which a run is bound by the CPU
CPU_NOTES = []  # (workload, sentence): peers bound by the CPU on the disk at saturation


def busy_share(cpu):
    """The share of the machine's cores a run kept busy, or None where not recorded."""
    if not cpu or cpu.get("cores_busy") is None:
        return None
    return cpu["cores_busy"] / cpu["cores"]


def cpu_table(out, runs, wl, ratio):
    """Regime 1: the cores the machine kept busy on each drive, per engine; a run with
    nearly all of them busy is bound by the CPU, so its TPS is not the drive's."""
    engs = engines_of(runs, wl)
    drives = drives_of(runs, wl, 1, ratio)
    cpu = {(d, e): (runs.get((wl, 1, ratio, d, e)) or {}).get("cpu") for d in drives for e in engs}
    known = [c for c in cpu.values() if c and c.get("cores_busy") is not None]
    if not known:
        return
    cores = known[0]["cores"]
    out.append(f"Cores the machine kept busy over the measured phase (of {cores}; the engine, the "
               f"servers' sysbench client and the kernel's I/O threads), and in brackets CPU ms per "
               f"transaction. {CPU_BOUND:.0%} of the cores or more: the run is bound by the CPU, "
               f"marked **bold**.")
    out.append("")
    out.append("| drive | " + " | ".join(NAMES[e] for e in engs) + " |")
    out.append("|---|" + "---|" * len(engs))
    for d in drives:
        cells = []
        for e in engs:
            c, r = cpu[(d, e)], runs.get((wl, 1, ratio, d, e))
            if not c or c.get("cores_busy") is None or not r or not r["tps"]:
                cells.append("—")
                continue
            busy = c["cores_busy"]
            text = f"{busy:.2f} ({fmt(busy / r['tps'] * 1000)})"
            cells.append(f"**{text}**" if busy_share(c) >= CPU_BOUND else text)
        out.append(f"| {d} | " + " | ".join(cells) + " |")
    out.append("")
    share = {e: busy_share(cpu.get(("disk", e))) for e in engs}
    bound = [e for e in PEERS if share.get(e) is not None and share[e] >= CPU_BOUND]
    free = [e for e in APPSIM if share.get(e) is not None and share[e] < CPU_BOUND]
    if bound and free:
        def names_busy(engines):
            return " and ".join(f"{NAMES[e]} {cpu[('disk', e)]['cores_busy']:.2f}" for e in engines)
        text = (f"On the disk the machine kept {names_busy(bound)} of its {cores} cores busy, "
                f"{names_busy(free)}: there the servers' TPS is set by this machine's CPU as much as by "
                f"the drive, and it is the denominator of every ratio to the disk, so a faster drive "
                f"cannot raise theirs much and a slower one lowers theirs less than the drive alone "
                f"would. A ratio of appsim's outside their band says as much about this machine's "
                f"cores as about appsim; the per-transaction I/O below is what separates the two.")
        out.append(text)
        out.append("")
        CPU_NOTES.append((wl, text))


ABS_SUMMARY = []  # (workload, appsim engine, drives in band, drives compared)


def absolute_table(out, runs, wl, ratio):
    """Regime 1 on the drives where no engine kept the CPU at CPU_BOUND: there every
    engine's TPS is the drive's cap over what the engine asks of it per transaction, with
    no CPU-bound denominator in between, so appsim's TPS itself is compared with the
    servers' (in band: between them or within BAND of the nearer)."""
    engs = engines_of(runs, wl)
    apps = [a for a in APPSIM if a in engs]
    peers = [p for p in PEERS if p in engs]
    if not apps or not peers:
        return
    rows, tally = [], {a: [0, 0] for a in apps}
    for d in drives_of(runs, wl, 1, ratio):
        rs = {e: runs.get((wl, 1, ratio, d, e)) for e in engs}
        if any(r is None for r in rs.values()):
            continue
        busy = [busy_share(r.get("cpu")) for r in rs.values()]
        if None in busy or max(busy) >= CPU_BOUND:
            continue
        verdicts = []
        for a in apps:
            ok = in_band(rs[a]["tps"], [rs[p]["tps"] for p in peers])
            if ok is None:
                continue
            tally[a][0] += bool(ok)
            tally[a][1] += 1
            short = verdict_label(a, apps)
            verdicts.append(f"{short}{'yes' if ok else 'no'}")
        rows.append(f"| {d} | " + " | ".join(fmt(rs[e]["tps"]) for e in engs) + " | "
                    + ", ".join(verdicts) + f" | {max(busy) * 100:.0f} % |")
    if not rows:
        return
    out.append("**Where the drive is the limit** (regime 1, the drives on which every engine kept "
               f"the machine's cores under {CPU_BOUND:.0%} busy): TPS itself, no ratio to a disk on "
               f"which a server may be short of CPU. \"In band\": between the servers' TPS or "
               f"within {BAND}x of the nearer.")
    out.append("")
    out.append("| drive | " + " | ".join(NAMES[e] for e in engs) + " | appsim in band | most cores busy |")
    out.append("|---|" + "---|" * (len(engs) + 2))
    out += rows
    out.append("")
    for a in apps:
        ABS_SUMMARY.append((wl, a, tally[a][0], tally[a][1]))


def io_table(out, runs, wl, ratio, regime=1):
    engs = [e for e in engines_of(runs, wl) if (wl, regime, ratio, "disk", e) in runs]
    if not engs:
        return
    io_ok = {}
    cols = (("reads", "reads", 1), ("read KiB", "read_bytes", 1024), ("writes", "writes", 1),
            ("write KiB", "write_bytes", 1024), ("flushes", "flushes", 1))
    out.append(f"Cache ratio {ratio} (buffer / data set), "
               f"{'saturation' if regime == 1 else 'the same offered load'}:")
    out.append("")
    out.append("| per transaction | " + " | ".join(NAMES[e] for e in engs) + " | appsim in band |")
    out.append("|---|" + "---|" * (len(engs) + 1))
    for name, key, div in cols:
        vals = {e: runs[(wl, regime, ratio, "disk", e)]["per_txn"][key] / div for e in engs}
        verdict = []
        for a in (e for e in APPSIM if e in vals):
            pv = [vals[p] for p in PEERS if p in vals]
            ok = bool(in_band(vals[a], pv)) if vals[a] > 0 else any(v < 0.05 for v in pv)
            verdict.append("yes" if ok else "no")
            io_ok.setdefault(a, []).append((name, ok))
        out.append(f"| {name} | " + " | ".join(fmt(vals[e]) for e in engs) + " | " + ", ".join(verdict) + " |")
    row = []
    for e in engs:
        r = runs[(wl, regime, ratio, "disk", e)]
        row.append(f"{fmt(r['buffer_bytes'] / 1048576)} / {fmt(r['data_bytes'] / 1048576)} MiB")
    out.append("| buffer / data | " + " | ".join(row) + " | |")
    row = []
    for e in engs:
        r = runs[(wl, regime, ratio, "disk", e)]
        row.append(fmt(r["tps"]))
    out.append("| TPS | " + " | ".join(row) + " | |")
    out.append("")
    for a, oks in io_ok.items():
        IO_SUMMARY.append((wl, ratio, regime, a, [n for n, ok in oks if ok], [n for n, ok in oks if not ok]))


def sizes_table(out, runs, wl, ratio):
    engs = [e for e in engines_of(runs, wl)
            if runs.get((wl, 1, ratio, "disk", e), {}).get("io_sizes")]
    if not engs:
        return
    hist = {e: runs[(wl, 1, ratio, "disk", e)]["io_sizes"] for e in engs}
    labels = [b["size"] for b in hist[engs[0]]]
    out.append("| I/O size (share of the drive's requests) | " + " | ".join(NAMES[e] for e in engs) + " |")
    out.append("|---|" + "---|" * len(engs))
    totals = {e: sum(b["count"] for b in hist[e]) or 1 for e in engs}
    for i, lab in enumerate(labels):
        shares = {e: hist[e][i]["count"] / totals[e] for e in engs}
        if all(s < 0.005 for s in shares.values()):
            continue
        out.append(f"| {lab} | " + " | ".join(f"{100 * shares[e]:.1f} %" for e in engs) + " |")
    out.append("")


def main():
    args = sys.argv[1:]
    command = "sudo tests/bench/fidelity.sh OUT_DIR"
    title = "The measurements"
    note = ""
    for flag in ("--command", "--title", "--note"):
        if flag in args:
            i = args.index(flag)
            if flag == "--command":
                command = args[i + 1]
            elif flag == "--title":
                title = args[i + 1]
            else:
                note = args[i + 1]
            del args[i:i + 2]
    intro = "--no-intro" not in args
    args = [a for a in args if a != "--no-intro"]
    if not args:
        sys.exit(__doc__)
    runs = load(args)
    if not runs:
        sys.exit("no runs in " + sys.argv[1])
    any_run = next(iter(runs.values()))
    dates = sorted({r["date"] for r in runs.values()})
    ratio = min(k[2] for k in runs if k[1] == 1)
    out = []
    if intro:
        with open(__file__.replace("fidelity_report.py", "fidelity_intro.md"), encoding="utf-8") as f:
            out.append(f.read().rstrip("\n"))
        out.append("")
    out.append(f"## {title}")
    out.append("")
    if note:
        out.append(note)
        out.append("")
    warm = {g: sorted({r["warmup_s"] for r in runs.values() if r["regime"] == g}) for g in (1, 2)}
    warm_text = ", ".join(f"{'/'.join(map(str, w))} s in regime {g}" for g, w in warm.items() if w)
    out.append(f"Measured {' to '.join(dict.fromkeys([dates[0], dates[-1]]))} on {any_run['machine']}; "
               f"each run warmed up ({warm_text}), then measured {any_run['duration_s']} s, with "
               f"{any_run['threads']} clients; made by `{command}`, this page by "
               f"`tests/bench/fidelity_report.py RESULTS.jsonl`.")
    if REPEATED:
        rep = sorted({(k[0], k[3], k[1]) for k in REPEATED})
        out.append("")
        out.append("Measured twice, the better run counting (other work shared the machine during "
                   "the first pass): " + "; ".join(f"{w} on `{d}`, regime {g}" for w, d, g in rep) + ".")
    out.append("")
    out.append("The drives:")
    out.append("")
    seen = {}
    for r in runs.values():
        seen.setdefault(r["drive"], r["drive_description"])
    for d in DRIVE_ORDER:
        if d in seen:
            out.append(f"- `{d}`: {seen[d]}")
    out.append("")
    for wl, title in (("sysbench", "sysbench oltp_read_write"), ("tpcc", "TPC-C")):
        if not any(k[0] == wl for k in runs):
            continue
        shape = next(r["sysbench_shape"] for r in runs.values() if r["workload"] == wl)
        out.append(f"### {title}")
        out.append("")
        out.append(f"Servers: `sysbench {shape}`; appsim: the same shape through `appsim {wl}`.")
        out.append("")
        out.append(f"**Regime 1, saturation** (cache ratio {ratio}): TPS, and in brackets the ratio to "
                   f"the same engine on the disk. \"In band\": appsim's ratio lies between the peers' "
                   f"or within {BAND}x of the nearer one.")
        out.append("")
        ratio_table(out, runs, wl, 1, ratio, "tps", "TPS", True)
        cpu_table(out, runs, wl, ratio)
        absolute_table(out, runs, wl, ratio)
        if any(k[0] == wl and k[1] == 2 for k in runs):
            offered = next((r["offered_tps"] for r in runs.values()
                            if r["workload"] == wl and r["regime"] == 2), None)
            out.append(f"**Regime 2, the same offered load** ({fmt(offered)} TPS for every engine): mean "
                       f"latency in ms at the achieved TPS, and in brackets the ratio to the disk.")
            out.append("")
            ratio_table(out, runs, wl, 2, ratio, "mean_ms", "mean latency", False)
            out.append("The 99th percentile, ms (ratio to the disk):")
            out.append("")
            ratio_table(out, runs, wl, 2, ratio, "p99_ms", "p99 latency", False)
        out.append("**What each engine asks of the drive**, per transaction, on the disk "
                   "(the drive's own counters over the measured phase). Flushes per transaction "
                   "fall as the rate rises (concurrent commits share one), so they compare "
                   "best at the same offered load:")
        out.append("")
        for q in sorted({k[2] for k in runs if k[0] == wl and k[1] == 1 and k[3] == "disk"}):
            io_table(out, runs, wl, q)
        io_table(out, runs, wl, ratio, regime=2)
        sizes_table(out, runs, wl, ratio)
    head = ["### Verdicts", "",
            "| workload | regime | compared by | appsim | same order as the peers | ratio to the disk in band |",
            "|---|---|---|---|---|---|"]
    for wl, regime, label, a, ok, bad, (k, n) in SUMMARY:
        head.append(f"| {wl} | {regime} | {label} | {NAMES[a]} | {'yes' if ok else 'no: ' + ', '.join(bad)} "
                    f"| {k} of {n} drives |")
    if ABS_SUMMARY:
        head += ["", "| workload | appsim | TPS in band where the drive is the limit (regime 1) |",
                 "|---|---|---|"]
        for wl, a, k, n in ABS_SUMMARY:
            head.append(f"| {wl} | {NAMES[a]} | {k} of {n} drives |")
    head += ["", "| workload | cache ratio | regime | appsim | I/O per transaction in band | not |",
             "|---|---|---|---|---|---|"]
    for wl, q, regime, a, yes, no in IO_SUMMARY:
        head.append(f"| {wl} | {q} | {regime} | {NAMES[a]} | {', '.join(yes) or '—'} | {', '.join(no) or '—'} |")
    head.append("")
    for wl, text in CPU_NOTES:
        head += [f"CPU, {wl}: {text}", ""]
    at = out.index("The drives:")
    out[at:at] = head
    print("\n".join(out))


if __name__ == "__main__":
    main()
