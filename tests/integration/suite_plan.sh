#!/usr/bin/env bash
# `appsim suite` states its planned time before anything runs, and its small review size
# loads the drive. Through the binary: the review suite's --dry-run gives the total
# (23m30s: warm-up + measured of the six steps) before the first step; the small tpcc
# step runs without waits (20 users at the review pacing would offer about 8 TPS) and
# the small sysbench steps hold more data than their buffer (so reads reach the drive).
# A real run of a one-step suite states the total before the step, and after it how
# busy the drive was (also in suite.json), warning when the step left it mostly idle.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/target"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
printf 'fio version 3 iolog\n0 disk add\n0 disk open\n1 disk read 0 4096\n2 disk close\n' >t.log

"$APPSIM" suite review --size small --dry-run --target "$PWD/target" -o "$PWD/out" \
  --trace "$PWD/t.log" >plan.txt 2>plan.err || fail "dry-run: $(cat plan.err)"
[ ! -e out ] || fail "--dry-run created its output directory"
python3 - <<'PY' || fail "the plan: $(cat plan.txt)"
import re
lines = open("plan.txt").read().splitlines()
first_step = next(i for i, l in enumerate(lines) if re.match(r"1/6 ", l))
total = [i for i, l in enumerate(lines) if l.startswith("planned in all: at least 23m30s")]
assert total and total[0] < first_step, ("the total before the first step", lines[:3])
steps = {l.split(":")[0].split()[1]: l for l in lines if re.match(r"\d/6 ", l)}
assert len(steps) == 6, list(steps)
assert "--pacing off" in steps["tpcc"], steps["tpcc"]
def opt(line, name):
    m = re.search(r"--%s[ =](\S+)" % name, line)
    assert m, (name, line)
    return m.group(1)
def size(v):
    return int(v[:-1]) << {"K": 10, "M": 20, "G": 30}[v[-1]] if v[-1] in "KMG" else int(v)
for s in ("sysbench-sqlite", "sysbench-lmdb"):
    rows = int(opt(steps[s], "tables")) * int(opt(steps[s], "table-size"))
    # about 200 bytes a row on disk (SQLite: 321 MiB for 1.6 million rows; LMDB a little more)
    assert rows * 200 > size(opt(steps[s], "buffer")), (s, rows, steps[s])
PY

# A real run: one short io step.
cat >one.ini <<'INI'
[suite]
name = one
[read]
command = io
args = --profile 4k-random-read --target {target} --json {result} --file-size 8M --warmup 200ms --duration 1s --quiet
INI
"$APPSIM" suite one.ini --target "$PWD/target" -o "$PWD/run" >run.txt 2>run.err ||
  fail "suite: $(cat run.err)"
total_at=$(grep -n "suite: planned in all: at least 1s" run.err | cut -d: -f1 | head -1)
step_at=$(grep -n "suite: step 1/1 read: appsim io" run.err | cut -d: -f1 | head -1)
[ -n "$total_at" ] && [ -n "$step_at" ] && [ "$total_at" -lt "$step_at" ] ||
  fail "the planned total is not stated before the step: $(cat run.err)"
grep -Eq "suite: step 1/1 read: (drive busy [0-9]+ % of its busiest measured phase|drive load not recorded)" run.err ||
  fail "no drive load after the step: $(cat run.err)"
python3 - <<'PY' || fail "suite.json: $(cat run/suite.json)"
import json
step = json.load(open("run/suite.json"))["steps"][0]
res = json.load(open("run/read.json"))
if "device_io" in json.dumps(res):
    assert 0 <= step["drive_busy"] <= 1, step
PY
echo "suite_plan: ok"
