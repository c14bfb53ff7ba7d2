#!/usr/bin/env bash
# tests/integration/mpi_ranks.sh: the MPI build under `mpirun -np 4 --oversubscribe` on
# one machine (docs/mpi.md), for tpcc, sysbench (SQLite and LMDB), replay (each rank its
# own trace, and one trace split by volume) and vdi (desktops spread over the ranks):
# one result from rank 0 whose counts are the sums of the ranks' counts, whose
# histogram is the bucket-by-bucket sum of the ranks' histograms and whose p99 is the
# p99 of the ranks' histograms put together, that `appsim compare` accepts. Also: a
# plain appsim of the MPI build is one rank; a rank that fails stops the job with its
# rank and host, without a hang. Skips (77) only when mpirun is not installed.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
if ! command -v mpirun >/dev/null; then
  echo "SKIP: mpirun not found (apt-get install openmpi-bin libopenmpi-dev, then rebuild)"
  exit 77
fi
rm -rf "$APPSIM_TMP"
mkdir -p "$APPSIM_TMP"
T=$APPSIM_TMP
fail() { echo "FAIL: $*" >&2; exit 1; }
# --bind-to none: the ranks keep the CPU set they were started with (taskset).
MPI=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4)
export OMPI_MCA_btl_vader_single_copy_mechanism=none # containers without CMA

# The ranks' sections against the job's figures (see the header).
check() {
  python3 - "$1" "$2" <<'EOF'
import json, math, sys
path, ranks = sys.argv[1], int(sys.argv[2])
d = json.load(open(path))
runs = []
def walk(o):  # every run section: top level, or a curve point's "run"
    if isinstance(o, dict):
        if "summary" in o and "histograms" in o: runs.append(o)
        for k, v in o.items():
            if k != "ranks": walk(v)  # a rank's own section is no run of the job
    elif isinstance(o, list):
        for v in o: walk(v)
walk(d)
assert runs, "no run in the result"
def mid(i):
    if i < 2048: return i
    k, sub = (i - 2048) // 1024, (i - 2048) % 1024 + 1024
    return (sub << (k + 1)) + ((1 << (k + 1)) - 1) // 2
def buckets(h):  # docs/result-schema.md: "sparse" (gaps from the last index) or pairs
    if "buckets" in h: return {i: c for i, c in h["buckets"]}
    out, at = {}, 0
    for e in filter(None, h["sparse"].split(",")):
        gap, _, c = e.partition(":")
        at += int(gap)
        out[at] = int(c or 1)
    return out
def p99(buckets, n, lo, hi):
    want, seen = max(1, math.ceil(0.99 * n)), 0
    for i in sorted(buckets):
        seen += buckets[i]
        if seen >= want: return min(max(mid(i), lo), hi)
for r in runs:
    rk = r["ranks"]
    assert len(rk) == ranks and r["mpi"]["ranks"] == ranks, "ranks"
    n = sum(x["summary"]["count"] for x in rk)
    assert r["summary"]["count"] == n > 0, f'count {r["summary"]["count"]} != {n}'
    assert r["summary"]["errors"] == sum(x["summary"]["errors"] for x in rk), "errors"
    b = {}
    for x in rk:
        for i, c in buckets(x["histogram"]).items(): b[i] = b.get(i, 0) + c
    assert buckets(r["histograms"]["all"]) == b, "merged buckets != sum of the ranks'"
    lo = min(x["histogram"]["min_ns"] for x in rk if x["histogram"]["count"])
    hi = max(x["histogram"]["max_ns"] for x in rk)
    want = p99(b, n, lo, hi) / 1000
    got = r["summary"]["latency_us"]["p99_us"]
    assert abs(got - want) < 1e-3, f"p99 {got} != {want} of the concatenated histograms"
    unit = r["summary"]["unit"]
    rate = sum(x["summary"][unit] for x in rk)
    assert abs(r["summary"][unit] - rate) <= 1e-6 * rate, f"{unit} {r['summary'][unit]} != {rate}"
    for t, pt in r["per_type"].items():
        assert pt["count"] == sum(x["per_type"][t]["count"] for x in rk), f"per type {t}"
        assert pt["errors"] == sum(x["per_type"][t]["errors"] for x in rk), f"per type {t}"
        # each rank's own histogram per type; the job's is their bucket-by-bucket sum
        b = {}
        for x in rk:
            for i, c in buckets(x["histograms"][t]).items(): b[i] = b.get(i, 0) + c
        assert buckets(r["histograms"][t]) == b, f"per type {t}: merged buckets"
        assert all(x["histograms"][t]["count"] == x["per_type"][t]["count"] for x in rk), t
    for x in rk:
        assert x["hostname"] and "measure" in x, "rank section"
    if r is d:
        assert all(x["target"] and x["host"] for x in rk), "ranks: host and target"
    assert r["mpi"]["measure_stop_spread_ms"] >= 0
print(f"{path}: {len(runs)} run(s), counts and p99 agree over {ranks} ranks")
EOF
}

# 1. A plain appsim of the MPI build is one rank, as before.
"$APPSIM" --version >/dev/null || fail "plain appsim --version"

# 2. tpcc: prepare and run on a database per rank.
"${MPI[@]}" "$APPSIM" tpcc prepare --target "$T/tpcc-{rank}" --scale 1 --quiet \
  >"$T/tpcc-prep.out" 2>&1 || fail "tpcc prepare: $(tail -20 "$T/tpcc-prep.out")"
for r in 0 1 2 3; do [ -d "$T/tpcc-$r" ] || fail "tpcc-{rank} was not substituted ($r)"; done
"${MPI[@]}" "$APPSIM" tpcc run --target "$T/tpcc-{rank}" --scale 1 --pacing off --vusers 2 \
  --connections 2 --warmup 1 --duration 2 --report-interval 1 --json "$T/tpcc.json" \
  >"$T/tpcc.out" 2>&1 || fail "tpcc run: $(tail -20 "$T/tpcc.out")"
check "$T/tpcc.json" 4
grep -q "4 ranks on 1 host" "$T/tpcc.out" || fail "the text summary names the ranks"
python3 - "$T/tpcc.json" <<'EOF' || fail "tpcc: intervals or warehouses"
import json, sys
d = json.load(open(sys.argv[1]))
m = [iv for iv in d["intervals"] if iv["phase"] == "measure"]
assert len(m) >= 2 and all(iv["ranks"] == 4 for iv in m[:2]), "measured intervals of 4 ranks"
# A unit completing as an interval closes may land in the next one (as with one rank).
n = sum(iv["count"] for iv in m)
assert abs(n - d["summary"]["count"]) <= 0.05 * n + 4, "intervals cover the measured phase"
assert abs(sum(iv["seconds"] for iv in m) - 2) < 0.05, "measured intervals last 2 s"
assert d["tpcc"]["rates"]["warehouses"] == 4, "the job's warehouses"
# Each rank's own tpcc detail; the job's merged exactly from them.
rk = [x["tpcc"] for x in d["ranks"]]
assert all(x["rates"]["warehouses"] == 1 for x in rk), "a rank's own warehouses"
assert all(len(x["per_instance"]) == 1 for x in rk) and len(d["tpcc"]["per_instance"]) == 4
assert sorted(i["rank"] for i in d["tpcc"]["per_instance"]) == [0, 1, 2, 3]
dd = d["tpcc"]["delivery_deferred"]
assert dd["count"] == sum(x["delivery_deferred"]["count"] for x in rk), "deferred deliveries"
assert dd["histogram"]["count"] == dd["count"]
assert dd["histogram"]["sum_ns"] == sum(x["delivery_deferred"]["histogram"]["sum_ns"] for x in rk)
for t, v in d["tpcc"]["reads_per_txn"].items():
    assert v["transactions"] == sum(x["reads_per_txn"][t]["transactions"] for x in rk), t
    for k, n in v["blocks"].items():
        assert n == sum(x["reads_per_txn"][t]["blocks"][k] for x in rk), (t, k)
assert d["tpcc"]["vu_engine"]["units"] == sum(x["vu_engine"]["units"] for x in rk)
assert all(isinstance(x["database"], list) and x["database"][0]["vfs"] for x in d["ranks"])
EOF

# 3. sysbench on both engines.
for e in sqlite lmdb; do
  "${MPI[@]}" "$APPSIM" sysbench --engine $e --target "$T/sb-$e-{rank}" --tables 1 \
    --table-size 2000 --threads 2 --warmup 1 --time 2 --json "$T/sb-$e.json" --quiet \
    >"$T/sb-$e.out" 2>&1 || fail "sysbench $e: $(tail -20 "$T/sb-$e.out")"
  check "$T/sb-$e.json" 4
  python3 - "$T/sb-$e.json" <<'EOF' || fail "sysbench $e: each rank's own detail"
import json, sys
d = json.load(open(sys.argv[1]))
rk = [x["sysbench"] for x in d["ranks"]]
for q in ("reads", "writes", "other", "total"):
    assert d["sysbench"]["queries"][q] == sum(x["queries"][q] for x in rk), q
assert all(x["engine"]["name"] == d["engine"]["name"] for x in d["ranks"]), "engine per rank"
assert all(x["warmup"]["seconds"] > 0 and x["warmup"]["count"] >= 0 for x in d["ranks"]), "warm-up"
EOF
done

# Ranks on one disk count each other's I/O as their own, not as foreign: each rank's
# foreign bytes are the disk's beyond what all 4 ranks moved (docs/mpi.md).
python3 - "$T/sb-sqlite.json" <<'EOF' || fail "sysbench: ranks sharing a disk"
import json, sys
d = json.load(open(sys.argv[1]))
io = [x.get("device_io") for x in d["ranks"]]
if not all(isinstance(x, dict) and x["own_write_bytes"] is not None for x in io):
    print("no disk counters or no /proc/self/io here: nothing to check"); sys.exit(0)
assert len({x["disk"] for x in io}) == 1, "4 targets in one directory: one disk"
own_w = sum(x["own_write_bytes"] for x in io)
own_r = sum(x["own_read_bytes"] for x in io)
for x in io:
    assert x["ranks_on_disk"] == 4, x
    assert x["ranks_own_write_bytes"] == own_w and x["ranks_own_read_bytes"] == own_r, x
    assert x["foreign_write_bytes"] == max(0, x["write_bytes"] - own_w), x
    assert x["foreign_read_bytes"] == max(0, x["read_bytes"] - own_r), x
    assert ("warning" in x) == (x["foreign_io_share"] > 0.05 and
            x["foreign_write_bytes"] + x["foreign_read_bytes"] >= 4 << 20), x
    if "warning" in x: assert "4 ranks" in x["warning"], x
EOF

# 4. replay: each rank its own trace; then one trace of four volumes, one per rank.
python3 - "$T" <<'EOF'
import random, sys
rnd = random.Random(3)
def records(f, name, n):
    t = 0
    for i in range(n):
        t += rnd.randint(50, 500)
        op = "read" if rnd.random() < 0.7 else "write"
        f.write(f"{t} {name} {op} {rnd.randrange(0, 16 << 20, 4096)} 4096\n")
for r in range(4):
    with open(f"{sys.argv[1]}/trace-{r}.log", "w") as f:
        f.write("fio version 3 iolog\n0 disk add\n0 disk open\n")
        records(f, "disk", 400 + 100 * r)
with open(f"{sys.argv[1]}/volumes.log", "w") as f:
    f.write("fio version 3 iolog\n")
    for v in range(4): f.write(f"0 vol{v} add\n0 vol{v} open\n")
    for v in range(4): records(f, f"vol{v}", 300)
EOF
mkdir -p "$T"/rp-{0,1,2,3} "$T"/rv-{0,1,2,3}
"${MPI[@]}" "$APPSIM" replay "$T/trace-{rank}.log" --target "$T/rp-{rank}" --timing afap \
  --qd 4 --warmup 0.5 --duration 1.5 --json "$T/replay.json" --quiet >"$T/replay.out" 2>&1 ||
  fail "replay: $(tail -20 "$T/replay.out")"
check "$T/replay.json" 4
"${MPI[@]}" "$APPSIM" replay "$T/volumes.log" --volume '{rank}' --target "$T/rv-{rank}" \
  --json "$T/replay-vol.json" --quiet >"$T/replay-vol.out" 2>&1 ||
  fail "replay --volume {rank}: $(tail -20 "$T/replay-vol.out")"
check "$T/replay-vol.json" 4
python3 - "$T/replay-vol.json" <<'EOF' || fail "one trace split by volume: 300 I/Os per rank"
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["summary"]["count"] for x in d["ranks"]] == [300] * 4, d["ranks"][0]["summary"]
EOF

# 5. vdi: 8 desktops spread over 4 ranks.
"${MPI[@]}" "$APPSIM" vdi --clones full --phase boot --desktops 8 --target "$T/vdi-{rank}" \
  --curve-points 0.5 --point-warmup 0.2 --point-duration 0.5 -o "$T/vdi.json" --quiet \
  >"$T/vdi.out" 2>&1 || fail "vdi: $(tail -20 "$T/vdi.out")"
check "$T/vdi.json" 4
grep -q '"this_rank": 2' "$T/vdi.json" || fail "vdi: 2 desktops per rank"
rm -rf "$T"/vdi-{0,1,2,3} # each rank's image is 0.8 GiB: not kept longer than needed

# 6. compare accepts the job's results like any others.
"$APPSIM" compare "$T/tpcc.json" >"$T/cmp.out" 2>&1 || fail "compare: $(cat "$T/cmp.out")"
"$APPSIM" compare "$T/sb-sqlite.json" "$T/sb-lmdb.json" "$T/replay.json" "$T/vdi.json" \
  >"$T/cmp2.out" 2>&1 || fail "compare: $(cat "$T/cmp2.out")"

# 7. compare and report --ranks: each rank of one job is a drive (a column), labelled by
# rank, host and target, with that rank's own figures.
"$APPSIM" compare --ranks "$T/tpcc.json" "$T/vdi.json" --format json >"$T/ranks.json" \
  2>"$T/ranks.err" || fail "compare --ranks: $(cat "$T/ranks.err")"
python3 - "$T/ranks.json" "$T/tpcc.json" "$T/vdi.json" "$T" "$(uname -n)" <<'EOF2' ||
import json, sys
cmp, job, vdi = (json.load(open(f)) for f in sys.argv[1:4])
T, host = sys.argv[4], sys.argv[5]
tables = {t["workload"]: t for t in cmp["tables"]}
t = tables["tpcc"]
labels = [d["label"] for d in t["drives"]]
want = [f"rank {k} on {host} ({T}/tpcc-{k})" for k in range(4)]
assert sorted(labels) == want, labels
rate = next(m for m in t["metrics"] if m["id"] == "rate")
for d, v in zip(t["drives"], rate["values"]):
    k = int(d["label"].split()[1])
    assert abs(v["value"] - job["ranks"][k]["summary"]["tps"]) < 1e-9, (k, v["value"])
# vdi: each point's run holds the ranks; a rank's peak is its own share of the job's.
v = tables["vdi"]
assert len(v["drives"]) == 4, [d["label"] for d in v["drives"]]
peak = next(m for m in v["metrics"] if m["id"].endswith(".peak"))
pts = vdi["storms"][0]["curve"]["points"]
for d, x in zip(v["drives"], peak["values"]):
    k = int(d["label"].split()[1])
    own = max(p["run"]["ranks"][k]["summary"]["iops"] for p in pts)
    assert x["value"] == own > 0, (k, x["value"], own)
EOF2
  fail "compare --ranks: the columns are not the ranks"
"$APPSIM" report --ranks "$T/tpcc.json" -o "$T/ranks.html" >"$T/rr.out" 2>&1 ||
  fail "report --ranks: $(cat "$T/rr.out")"
for k in 0 1 2 3; do
  grep -q "rank $k on $(uname -n) ($T/tpcc-$k)" "$T/ranks.html" || fail "report --ranks: rank $k"
done
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); [d.pop(k) for k in ("mpi", "ranks")]
json.dump(d, open(sys.argv[2], "w"))' "$T/tpcc.json" "$T/cmp-solo.json" # as one process writes
set +e
"$APPSIM" compare --ranks "$T/cmp-solo.json" >"$T/nompi.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'not the result of an MPI job' "$T/nompi.out" ||
  fail "compare --ranks of a one-process result: exit $rc, $(cat "$T/nompi.out")"

# 8. A rank that fails stops the job with its rank and host, and nothing hangs: rank 2's
# target is a file, so it cannot start while the others wait for it.
touch "$T/bad-2"
set +e
timeout 120 "${MPI[@]}" "$APPSIM" sysbench --engine lmdb --target "$T/bad-{rank}" --tables 1 \
  --table-size 500 --time 1 --quiet >"$T/bad.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a failing rank: exit $rc (124 = hung)"
grep -q "rank 2 on $(uname -n)" "$T/bad.out" || fail "the message names rank 2: $(cat "$T/bad.out")"
rm -rf "$T"
echo "mpi_ranks: ok"
