#!/usr/bin/env bash
# tests/integration/suite_twice.sh: `suite` runs its steps in one process, so a command
# run twice must start the second time from its own options, not from the first run's
# (no option or command state kept in file-level variables). Two tpcc steps and two
# sysbench steps (SQLite, then LMDB) on one target: the first of each sets options the
# second leaves at their defaults; each result's config must show its own values.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/t"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >twice.ini <<'INI'
[suite]
name = twice
[tpcc-a]
command = tpcc
args = --target {target} --json {result} --scale 1 --vusers 4 --pacing off --warmup 0 --duration 1 --seed 7 --report-interval 500ms --quiet --sync off
[tpcc-b]
command = tpcc
args = --target {target} --json {result} --scale 1 --vusers 2 --pacing off --warmup 0 --duration 1 --sync off
[sb-sqlite]
command = sysbench
args = --engine sqlite --target {target} --json {result} --tables 1 --table-size 500 --warmup 0 --time 1 --seed 9 --ioengine psync --quiet
[sb-lmdb]
command = sysbench
args = --engine lmdb --target {target} --json {result} --tables 1 --table-size 500 --warmup 0 --duration 1
INI
set +e
"$APPSIM" suite twice.ini --target "$APPSIM_TMP/t" -o out >stdout.txt 2>stderr.txt
rc=$?
set -e
[ $rc -eq 0 ] || { cat stdout.txt stderr.txt; fail "suite exited $rc"; }
python3 - <<'PY' || { cat stderr.txt; fail "a step ran with another step's options"; }
import json
def cfg(step):
    return json.load(open("out/%s.json" % step))["config"]
a, b = cfg("tpcc-a"), cfg("tpcc-b")
assert a["seed"] == 7 and a["quiet"] is True and a["vusers"] == 4, a
assert abs(a["report-interval"] - 0.5) < 1e-9, a["report-interval"]
# tpcc-b gave none of these: the defaults, not tpcc-a's values.
assert b["seed"] == 1, b["seed"]
assert b["quiet"] is False, b["quiet"]
assert b["vusers"] == 2, b["vusers"]
assert abs(b["report-interval"] - 5.0) < 1e-9, b["report-interval"]
s, l = cfg("sb-sqlite"), cfg("sb-lmdb")
assert s["seed"] == 9 and s["ioengine"] == "psync" and s["quiet"] is True, s
assert l["seed"] == 1 and l["quiet"] is False, l
assert l["ioengine"] is None, l["ioengine"]  # not applicable to LMDB
# tpcc-b was not quiet: its progress lines are on stderr, tpcc-a's are not.
PY
grep -q 'tpcc: .*instance' stderr.txt || { cat stderr.txt; fail "the second tpcc step was quiet too"; }
echo "suite twice: ok"
