#!/usr/bin/env bash
# `appsim io` through the real binary on a directory target in $APPSIM_TMP: the profile
# list, nine refusals (exit 2, each saying what to do), a short curve of every built-in
# profile on a filled section (two points each, reads and writes apart, the database
# profiles marked as approximations, the fill recorded), fio's and vdbench's option
# names, --json - alone on stdout, and cleanup of the data file.
set -u
fail() { echo "FAIL: $*"; exit 1; }
T=$APPSIM_TMP
rm -rf "$T"; mkdir -p "$T/tgt"
A="$APPSIM"
"$A" io --help | grep -q -- "--rwmixread" || fail "io --help lists fio's names"
[ "$("$A" io --list | tail -n +2 | wc -l)" -eq 15 ] || fail "15 built-in profiles"
"$A" io --list | grep -q "oracle-80-20.*approximation" || fail "--list marks approximations"

refuse() { # expected words, then the arguments
  local want=$1; shift
  local err rc
  err=$("$A" io "$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "io $* must exit 2 (got $rc: $err)"
  echo "$err" | grep -q -- "$want" || fail "io $*: message must say '$want': $err"
}
refuse "--target" --profile sql
refuse "no profile 'nope'" --target "$T/tgt" --profile nope
refuse "add --curve" --target "$T/tgt" --all
refuse "give one" --target "$T/tgt" --bs 4k --xfersize 8k
refuse "give one" --target "$T/tgt" --read-pct 50 --rwmixread 60
refuse "shares add up" --target "$T/tgt" --bs "(4k,50,8k,20)"
refuse "--curve-points needs --curve" --target "$T/tgt" --curve-points 50
refuse "smaller than 1 MiB" --target "$T/tgt" --file-size 2M --section 10
refuse "applies to one run" --target "$T/tgt" --curve --warmup steady
[ ! -e "$T/tgt/io.data" ] || fail "a refused run must create nothing"

# Every profile, a short curve on a filled 16 MiB section of a 32 MiB data file. The
# measured windows are 0.6 s: on the shared virtio disk a burst of writes can stall the
# next profile's I/O for a few hundred ms, and a maximum-rate run that completes no I/O
# in its window is (rightly) an error; with 0.2 s windows that failed 3 runs in 6.
"$A" io --target "$T/tgt" --all --curve --curve-points 100 --warmup 0.1 --duration 0.6 \
  --file-size 32M --section 50 --fill --quiet --json "$T/all.json" >"$T/all.out" 2>&1 \
  || fail "io --all: $(tail -5 "$T/all.out")"
grep -q "approximation" "$T/all.out" || fail "the text says the database profiles are approximations"
grep -q "peak:" "$T/all.out" || fail "the text gives each peak"
grep -q "filled end to end first" "$T/all.out" || fail "the text says the section was filled"
grep -q "target not preconditioned" "$T/all.out" || fail "the text says whether the target was preconditioned"
python3 - "$T/all.json" <<'EOF' || fail "io --all result"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["workload"] == "io"
assert d["fill"]["bytes"] == 16 << 20, d["fill"]
assert d["section"]["length"] == 16 << 20 and d["section"]["percent"] == 50
assert "preconditioning" in d["target"]
ps = d["profiles"]
assert len(ps) == 15, len(ps)
approx = [p["profile"] for p in ps if "approximation" in p]
assert approx == ["sql", "sql-90-10", "sql-80-20", "oracle", "oracle-90-10", "oracle-80-20"], approx
for p in ps:
    pts = p["curve"]["points"]
    assert len(pts) == 2, p["profile"]
    assert pts[0]["iops"] > 0 and pts[1]["fraction"] == 1.0, p["profile"]
    r, w = pts[1]["read"], pts[1]["write"]
    for k in ("iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us"):
        assert k in r and k in w, (p["profile"], k)
    assert "saturated" in pts[1] and "offered_iops" in pts[1]
    rp = p["definition"]["read_pct"]
    # A point's I/Os are its interval's arrivals that were served: on a shared disk that
    # stalls for the whole window none may be, and then the point must say saturated.
    served = lambda d: d["count"] > 0 or pts[1]["saturated"]
    if rp == 100: assert w["count"] == 0 and served(r), p["profile"]
    if rp == 0: assert r["count"] == 0 and served(w), p["profile"]
    assert "peak" in p["curve"]
    assert pts[1]["replay"]["errors"] == 0
EOF

# fio's names, one run as fast as possible; the definition records what they meant.
"$A" io --target "$T/tgt" --file-size 32M --bs 8k --rwmixread 60 --iodepth 4 --numjobs 2 \
  --seekpct 100 --duration 0.3 --warmup 0.05 --json "$T/fio.json" >"$T/fio.out" 2>&1 \
  || fail "fio names: $(cat "$T/fio.out")"
grep -q "latency (ms)" "$T/fio.out" || fail "one run prints its summary"
python3 - "$T/fio.json" <<'EOF' || fail "fio names result"
import json, sys
d = json.load(open(sys.argv[1]))
df = d["profiles"][0]["definition"]
assert df["threads"] == 8 and df["read_pct"] == 60 and df["xfersize"] == "8k", df
assert d["profiles"][0]["replay"]["qd"] == 8
assert d["summary"]["count"] > 0 and d["fill"] is None
pt = d["per_type"]
assert pt["read"]["count"] > 0 and pt["write"]["count"] > 0
share = pt["read"]["count"] / (pt["read"]["count"] + pt["write"]["count"])
assert 0.45 < share < 0.75, share
EOF

# vdbench's forms and names, a fixed rate, and the document alone on stdout.
"$A" io --target "$T/tgt" --file-size 32M --xfersize "(4k,50,64k,50)" --rdpct 100 --seekpct 0 \
  --threads 2 --rate 500 --duration 0.4 --warmup 0.05 --json - >"$T/stdout.json" 2>"$T/err" \
  || fail "vdbench names: $(cat "$T/err")"
python3 - "$T/stdout.json" <<'EOF' || fail "--json - must put only the document on stdout"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["profiles"][0]["definition"]["xfersize"] == "(4k,50,64k,50)"
assert d["profiles"][0]["replay"]["timing"] == "rate"
EOF

"$A" cleanup --target "$T/tgt" >/dev/null 2>&1 || fail "cleanup"
[ ! -e "$T/tgt/io.data" ] || fail "cleanup must remove the data file"
echo "ok"
