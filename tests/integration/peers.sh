#!/usr/bin/env bash
# What users of fio and sysbench type, through the real binary: fio's names in `appsim
# io` (--rw, --runtime, --ramp_time, --direct, --iodepth, --rwmixread) and --iodepth
# in `replay`, each recorded under appsim's own option and noted once on stderr;
# sysbench's positional form (`sysbench oltp_read_only run`), its underscore names and
# --events (exactly that many measured transactions); peers' options with no meaning
# refused with what to do instead; "did you mean" for a mistyped command, action or
# option. Every refusal exits 2 and creates nothing.
set -u
fail() { echo "FAIL: $*"; exit 1; }
T=$APPSIM_TMP
rm -rf "$T"; mkdir -p "$T/tgt"
A="$APPSIM"

refuse() { # command, expected words, then the arguments
  local cmd=$1 want=$2; shift 2
  local err rc
  err=$("$A" "$cmd" "$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "$cmd $* must exit 2 (got $rc: $err)"
  echo "$err" | grep -qF -- "$want" || fail "$cmd $*: message must say '$want': $err"
}

# fio's spelling of a random-write job: recorded as appsim's options, one note each.
"$A" io --target "$T/tgt" --file-size 4M --size 1M --rw=randwrite --bs=4k --iodepth=2 \
  --runtime=0.2 --ramp_time=0 --direct=1 --quiet --json "$T/io.json" >/dev/null 2>"$T/io.err" ||
  fail "io with fio's names: $(cat "$T/io.err")"
for n in "--rw randwrite is fio's name for --read-pct 0 --random-pct 100" \
  "--iodepth is fio's name for --threads" "--runtime is fio's name for --duration" \
  "--ramp_time is fio's name for --warmup" "--direct=1 is fio's name for appsim's default"; do
  [ "$(grep -cF -- "$n" "$T/io.err")" -eq 1 ] || fail "one note '$n' expected: $(cat "$T/io.err")"
done
python3 - "$T/io.json" <<'PY' || fail "io config: $(head -c 400 "$T/io.json")"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["config"]
assert c["read-pct"] == 0 and c["random-pct"] == 100, c
assert c["threads"] == 2 and abs(c["duration"] - 0.2) < 1e-9 and c["warmup"] == 0, c
assert c["buffered"] is False, c
for k in ("runtime", "iodepth", "ramp_time", "direct", "rwmixread", "rdpct", "xfersize"):
    assert k not in c, k
s = d["summary"]
assert s["counters"]["bytes_read"] == 0 and s["counters"]["bytes_written"] > 0, s["counters"]
PY
# A mix: --rw randrw takes its read share from --rwmixread; --direct=0 is --buffered.
"$A" io --target "$T/tgt" --file-size 4M --size 1M --rw randrw --rwmixread 70 --direct=0 \
  --duration 0.1 --warmup 0 --quiet --json "$T/mix.json" >/dev/null 2>&1 || fail "io --rw randrw"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["read-pct"] == 70 and c["random-pct"] == 100 and c["buffered"] is True, c
' "$T/mix.json" || fail "randrw with rwmixread 70 and --direct=0: $(head -c 300 "$T/mix.json")"

rm -f "$T/tgt/io.data"
refuse io "sets the read share itself" --target "$T/tgt" --rw randread --read-pct 50
refuse io "sets the random share itself" --target "$T/tgt" --rw write --random-pct 50
refuse io "takes 0 or 1" --target "$T/tgt" --direct=2
refuse io "say the same thing" --target "$T/tgt" --iodepth 4 --threads 8
refuse io "--time_based has no meaning in appsim" --target "$T/tgt" --time_based
refuse io "--target DIR" --target "$T/tgt" --filename=/dev/sdb
refuse io "did you mean --duration?" --target "$T/tgt" --duraton 5
refuse io "did you mean --threads?" --target "$T/tgt" --thraeds 5
[ ! -e "$T/tgt/io.data" ] || fail "a refused io run must create nothing"
refuse sysbnch "did you mean 'sysbench'?"
refuse trace "did you mean 'info'?" inf

# replay: fio's --iodepth is --qd.
printf 'fio version 3 iolog\n0 f add\n0 f read 0 4096\n10 f write 4096 4096\n' >"$T/t.log"
"$A" replay "$T/t.log" --target "$T/tgt" --timing afap --iodepth 4 --quiet \
  --json "$T/rp.json" >/dev/null 2>"$T/rp.err" || fail "replay --iodepth: $(cat "$T/rp.err")"
grep -qF -- "--iodepth is fio's name for --qd" "$T/rp.err" || fail "replay note: $(cat "$T/rp.err")"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; assert c["qd"] == 4, c' \
  "$T/rp.json" || fail "replay --iodepth 4 must record qd 4"

# sysbench's own form: the script (name, NAME.lua or its path) before the action, its
# underscore names, and --events.
S=$T/sb
"$A" sysbench oltp_read_only prepare --target "$S" --table_size 200 --quiet >/dev/null \
  2>"$T/sb.err" || fail "sysbench oltp_read_only prepare: $(cat "$T/sb.err")"
grep -qF "sysbench's form of --workload oltp_read_only" "$T/sb.err" || fail "note: $(cat "$T/sb.err")"
grep -qF -- "--table_size is read as --table-size" "$T/sb.err" || fail "note: $(cat "$T/sb.err")"
"$A" sysbench /usr/share/sysbench/oltp_read_only.lua run --target "$S" --table-size 200 \
  --events 300 --time 60 --warmup 0 --quiet --json "$T/sb.json" >/dev/null 2>"$T/sb.err" ||
  fail "sysbench SCRIPT.lua run --events: $(cat "$T/sb.err")"
python3 - "$T/sb.json" <<'PY' || fail "sysbench --events: $(head -c 400 "$T/sb.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["workload"] == "oltp_read_only", d["config"]["workload"]
assert d["config"]["events"] == 300
assert d["summary"]["count"] == 300, d["summary"]["count"]
assert d["summary"]["seconds"] < 60, d["summary"]["seconds"]
PY
refuse sysbench "did you mean 'run'?" oltp_read_only runn --target "$S"
refuse sysbench "given twice" oltp_read_only run --workload oltp_insert --target "$S"
refuse sysbench "not a server" run --target "$S" --mysql-host=db1
refuse sysbench "--engine sqlite|lmdb" run --target "$S" --db-driver=mysql
echo "peers: ok"
