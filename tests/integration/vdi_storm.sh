#!/usr/bin/env bash
# tests/integration/vdi_storm.sh: `appsim vdi` end to end on a directory target, with
# short curve points: the six combinations of --all in one table (on small traces of
# one's own, to keep the layout light), the shipped captures, each storm's totals equal to N times its desktop trace, full clones on their
# own copies, linked clones on the replica and their deltas, the layout files of the
# right size, modeled phases labelled (--model-logins, and logins next to a user's own
# boot), a user's own capture (--boot-trace) with reads after writes going to the
# delta, and the usage errors.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"
mkdir -p "$APPSIM_TMP"
T=$APPSIM_TMP/target
N=3
SHORT=(--curve-points 0.5 --point-warmup 0.2 --point-duration 0.4 --quiet)

# Small desktop traces of one's own (fio iolog v3), so that --all stays light: three
# phases over a 64 MiB disk, random reads and writes, some reads of written blocks.
python3 - "$APPSIM_TMP" <<'EOF'
import random, sys
rnd = random.Random(7)
for phase, reads in (("boot", 0.8), ("login", 0.5), ("monday", 0.65)):
    with open(f"{sys.argv[1]}/{phase}.log", "w") as f:
        f.write("fio version 3 iolog\n0 disk add\n0 disk open\n")
        written, t = [], 0
        for i in range(300):
            t += rnd.randint(100, 5000)
            if written and rnd.random() < 0.1:
                off, ln = rnd.choice(written); op = "read"
            else:
                off = rnd.randrange(0, 64 << 20, 4096); ln = 4096 * rnd.choice((1, 2, 4, 9, 16))
                op = "read" if rnd.random() < reads else "write"
                if op == "write": written.append((off, ln))
            f.write(f"{t} disk {op} {off} {ln}\n")
        f.write(f"{t} disk close\n")
EOF
OWN=(--boot-trace "$APPSIM_TMP/boot.log" --login-trace "$APPSIM_TMP/login.log"
     --monday-trace "$APPSIM_TMP/monday.log")

# 1. --all: six storms, one table. (-o and --curve-points as a fraction are vdi's old
# spellings of --json FILE and of percent: still accepted, each with a note.)
"$APPSIM" vdi --all --desktops $N --target "$T" "${OWN[@]}" "${SHORT[@]}" \
  -o "$APPSIM_TMP/all.json" >"$APPSIM_TMP/all.txt" 2>"$APPSIM_TMP/all.err"
grep -q -- '-o is an old spelling of --json' "$APPSIM_TMP/all.err" || { cat "$APPSIM_TMP/all.err"; exit 1; }
grep -q -- "--curve-points '0.5' read as fractions" "$APPSIM_TMP/all.err" || { cat "$APPSIM_TMP/all.err"; exit 1; }
cat "$APPSIM_TMP/all.txt"
python3 - "$APPSIM_TMP/all.json" "$APPSIM_TMP/all.txt" "$T" "$N" <<'EOF'
import json, os, sys
doc = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
target, n = sys.argv[3], int(sys.argv[4])
storms = doc["storms"]
assert doc["config"]["curve-points"] == "50", doc["config"]["curve-points"]
assert [(s["clones"], s["phase"]) for s in storms] == [
    (c, p) for c in ("full", "linked") for p in ("boot", "initial-login", "monday-login")]
for s in storms:
    tr = doc["desktop_traces"][s["phase"]]
    assert s["source"] == tr["source"], (s["source"], tr["source"])
    row = [l for l in text.splitlines() if l.split()[:2] == [s["clones"], s["phase"]]]
    assert len(row) == 1 and s["source"] in row[0], row
    c = s["composition"]
    # Totals: every desktop replays the whole desktop trace.
    assert c["desktop_records"] == n * tr["records"], (c, tr)
    data = tr["reads"] + tr["writes"] + tr["trims"]
    if s["clones"] == "full":
        assert c["replica_reads"] == 0 and c["delta_reads"] == 0, c
        assert c["own_copy_reads"] == n * tr["reads"] and c["writes"] == n * (tr["writes"] + tr["trims"]), c
        assert s["layout_bytes"] == n * s["layout"]["image_bytes"], s["layout"]
        assert s["layout"]["copies"] == n
    else:
        assert c["own_copy_reads"] == 0, c
        assert c["replica_reads"] + c["delta_reads"] - c["split_reads"] >= n * tr["reads"] - c["split_reads"], c
        assert c["replica_reads"] > 0 and c["writes"] == n * (tr["writes"] + tr["trims"]), c
        lay = s["layout"]
        assert s["layout_bytes"] == lay["image_bytes"] + n * lay["delta_bytes"], lay
    assert c["last_start_s"] <= s["stagger_s"] + 1e-9, (c, s["stagger_s"])
    assert s["peak"]["iops"] > 0 and s["peak"]["mean_us"] > 0, s["peak"]
    pts = s["latency_vs_iops"]
    assert len(pts) == 2 and pts[1]["fraction"] == 0.5, pts
    data_file = os.path.join(target, s["data_file"])
    assert os.path.getsize(data_file) >= s["layout_bytes"], data_file
for p, tr in doc["desktop_traces"].items():
    assert tr["source"] == "user capture", (p, tr)
# Reads of written blocks went to the deltas in the linked storms.
assert all(s["composition"]["delta_reads"] > 0 for s in storms if s["clones"] == "linked")
print("vdi --all: ok")
EOF

# 1a. The shipped captures: all three phases captured with appsim (one light storm).
"$APPSIM" vdi --clones full --phase initial-login --desktops 1 --target "$T" "${SHORT[@]}" \
  -o "$APPSIM_TMP/shipped.json" >"$APPSIM_TMP/shipped.txt"
grep -E '^full +initial-login +captured ' "$APPSIM_TMP/shipped.txt" >/dev/null ||
  { echo "FAIL: shipped row"; cat "$APPSIM_TMP/shipped.txt"; exit 1; }
python3 - "$APPSIM_TMP/shipped.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for p, tr in d["desktop_traces"].items():
    assert tr["source"] == "captured", (p, tr)
    assert tr["origin"].endswith(p + ".atr"), tr["origin"]
    assert tr["records"] > 500, tr
s = d["storms"][0]
assert s["composition"]["desktop_records"] == d["desktop_traces"]["initial-login"]["records"]
EOF

# 1b. --model-logins: the login rows say "modeled", the boot row "captured".
"$APPSIM" vdi --clones full --phase monday-login --model-logins --desktops 1 --target "$T" \
  "${SHORT[@]}" -o "$APPSIM_TMP/model.json" >"$APPSIM_TMP/model.txt"
grep -E '^full +monday-login +modeled ' "$APPSIM_TMP/model.txt" >/dev/null ||
  { echo "FAIL: modeled row not labelled"; cat "$APPSIM_TMP/model.txt"; exit 1; }
python3 - "$APPSIM_TMP/model.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["desktop_traces"]
assert t["boot"]["source"] == "captured", t["boot"]
assert t["initial-login"]["source"] == "modeled" and t["monday-login"]["source"] == "modeled", t
assert "65% reads" in t["monday-login"]["origin"], t["monday-login"]["origin"]
assert d["storms"][0]["source"] == "modeled"
assert d["config"]["model-logins"] is True, d["config"]
EOF

# 2. A user's own boot capture (fio iolog v3): a read after a write goes to the delta.
cat >"$APPSIM_TMP/user.log" <<'EOF'
fio version 3 iolog
0 disk add
0 disk open
0 disk read 0 65536
1000 disk write 1048576 8192
2000 disk read 1048576 8192
3000 disk read 2097152 4096
4000 disk write 8192 4096
5000 disk read 8192 4096
6000 disk read 16384 4096
6000 disk close
EOF
"$APPSIM" vdi --clones linked --phase boot --boot-trace "$APPSIM_TMP/user.log" --desktops 4 \
  --stagger 0.001 --target "$T" "${SHORT[@]}" -o "$APPSIM_TMP/user.json" >/dev/null
python3 - "$APPSIM_TMP/user.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["storms"][0]
c = s["composition"]
assert s["source"] == "user capture", s["source"]
t = json.load(open(sys.argv[1]))["desktop_traces"]
# With the user's own boot, the logins are modeled on that boot's image.
assert t["initial-login"]["source"] == "modeled" and t["monday-login"]["source"] == "modeled", t
assert c["desktop_records"] == 4 * 7 and c["writes"] == 8, c
assert c["delta_reads"] == 8 and c["replica_reads"] == 12 and c["split_reads"] == 0, c
print("user trace: ok")
EOF

# 3. Usage errors: exit 2 with a message that says what to do.
expect_usage() {
  local what=$1
  shift
  set +e
  "$APPSIM" vdi "$@" >/dev/null 2>"$APPSIM_TMP/err"
  local rc=$?
  set -e
  if [ $rc -ne 2 ] || [ ! -s "$APPSIM_TMP/err" ]; then
    echo "FAIL: $what: exit $rc"; cat "$APPSIM_TMP/err"; exit 1
  fi
}
expect_usage "no target" --all
expect_usage "--all with --clones" --all --clones full --target "$T"
expect_usage "no phase" --clones full --target "$T"
expect_usage "bad phase" --clones full --phase lunch --target "$T"
expect_usage "missing trace" --clones full --phase boot --boot-trace "$APPSIM_TMP/nope" --target "$T"
expect_usage "bad curve points" --all --target "$T" --curve-points 0.5,x
"$APPSIM" cleanup --target "$T" >/dev/null 2>&1 || "$APPSIM" cleanup "$T" >/dev/null 2>&1 || true
echo "vdi_storm: ok"
