#!/usr/bin/env bash
# `appsim trace`: dispatch, info/convert/slice/merge on generated traces of several
# formats (round trips keep every record), clear errors with file:line for malformed
# input (exit 2) or counted skips with --skip-bad, the shared real samples when present,
# and fio accepting the iolog v3 that convert writes.
set -u
fail() { echo "FAIL: $*"; exit 1; }
T=$APPSIM_TMP
rm -rf "$T"; mkdir -p "$T"
"$APPSIM" trace >/dev/null 2>&1; [ $? -eq 2 ] || fail "trace without subcommand must exit 2"
"$APPSIM" trace --help | grep -q "convert" || fail "trace --help lists subcommands"
"$APPSIM" trace nosuch >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown subcommand must exit 2"
for sub in info convert slice merge formats; do
  "$APPSIM" trace $sub --help >/dev/null || fail "trace $sub --help"
done
"$APPSIM" trace formats | grep -q "vscsi" || fail "formats lists vscsi"

# An MSR trace with two disks, rows slightly out of order, a zero-length write.
{
  for i in $(seq 0 199); do
    t=$((128166385295514663 + i * 10000))
    [ $((i % 50)) -eq 7 ] && t=$((t - 25000))
    if [ $((i % 3)) -eq 0 ]; then op=Write; else op=Read; fi
    echo "$t,hm,$((i % 2)),$op,$((i * 4096)),4096,2500"
  done
  echo "128166385295514663,hm,0,Write,0,0,100"
} > "$T/msr.csv"
out=$("$APPSIM" trace info "$T/msr.csv") || fail "info msr"
echo "$out" | grep -q "msr trace" || fail "msr not detected: $out"
echo "$out" | grep -q "201 records" || fail "record count: $out"
echo "$out" | grep -q "2 volume" || fail "volumes: $out"
echo "$out" | grep -q "captured read latency" || fail "captured latency shown: $out"
"$APPSIM" trace info "$T/msr.csv" --json - | grep -q '"reordered": [1-9]' || fail "reordered count in JSON"
"$APPSIM" trace info "$T/msr.csv" --volume 1 | grep -q "100 records" || fail "--volume 1"

# convert round trips: appsim (plain and zstd) and fio v3
"$APPSIM" trace convert "$T/msr.csv" -o "$T/msr.apt" 2>/dev/null || fail "convert to appsim"
"$APPSIM" trace convert "$T/msr.csv" -o "$T/msr.apt.zst" 2>/dev/null || fail "convert to appsim.zst"
"$APPSIM" trace convert "$T/msr.apt" -o "$T/msr.log" --to fio-v3 --fio-file "$T/fio.data" \
  --volume 0 2>/dev/null || fail "convert to fio"
head -1 "$T/msr.log" | grep -q "fio version 3 iolog" || fail "fio header"
"$APPSIM" trace convert "$T/msr.csv" -o "$T/msr.apt" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an existing output must be refused"
"$APPSIM" trace convert "$T/msr.csv" -o "$T/msr.apt" --force 2>/dev/null || fail "--force replaces"
for f in msr.apt msr.apt.zst; do
  "$APPSIM" trace info "$T/$f" | grep -q "201 records" || fail "round trip through $f"
done
"$APPSIM" trace info "$T/msr.log" | grep -q "101 records" || fail "volume 0 through fio-v3"
cmp <("$APPSIM" trace info "$T/msr.csv" --json - | grep -v '"file"\|"format"\|"compression"\|"lines"\|"bytes"\|"reordered"\|"non_io"\|"sort_window"\|latency\|p[0-9]*_us\|mean_us\|max_us\|min_us\|stddev_us\|"count"') \
    <("$APPSIM" trace info "$T/msr.apt" --json - | grep -v '"file"\|"format"\|"compression"\|"lines"\|"bytes"\|"reordered"\|"non_io"\|"sort_window"\|latency\|p[0-9]*_us\|mean_us\|max_us\|min_us\|stddev_us\|"count"') \
  >/dev/null || fail "appsim conversion changed the figures"

# slice and merge
"$APPSIM" trace slice "$T/msr.apt" --from 50ms --until 100ms -o "$T/slice.apt" 2>/dev/null || fail "slice"
"$APPSIM" trace info "$T/slice.apt" | grep -q " 50 records" || fail "slice holds 50 records: $("$APPSIM" trace info "$T/slice.apt" | head -1)"
printf 'fio version 3 iolog\n0 a add\n5 a read 0 4096\n7 a write 4096 4096\n' > "$T/a.log"
"$APPSIM" trace merge "$T/msr.apt" "$T/a.log" -o "$T/merged.apt" 2>/dev/null || fail "merge"
m=$("$APPSIM" trace info "$T/merged.apt")
echo "$m" | grep -q "203 records" || fail "merge count: $m"
echo "$m" | grep -q "3 volume" || fail "merge keeps traces on their own volumes: $m"

# malformed input: file:line and reason, exit 2; --skip-bad counts
cp "$T/msr.csv" "$T/bad.csv"
sed -i '5s/Read/Rread/; 9s/,4096,2500$/,x,2500/' "$T/bad.csv"
err=$("$APPSIM" trace info "$T/bad.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "malformed input must exit 2, got $rc"
echo "$err" | grep -q "bad.csv:5:" || fail "error must name file:line: $err"
echo "$err" | grep -q "skip-bad" || fail "error must say what to do: $err"
"$APPSIM" trace info "$T/bad.csv" --skip-bad --json - | grep -q '"skipped_bad": 2' || fail "--skip-bad count"
"$APPSIM" trace convert "$T/bad.csv" -o "$T/bad.apt" >/dev/null 2>&1; [ $? -eq 2 ] || fail "convert of bad input"
[ ! -e "$T/bad.apt" ] || fail "a failed convert must leave no output"
"$APPSIM" trace convert "$T/merged.apt" -o "$T/merged.log" --to fio-v3 >/dev/null 2>&1
[ $? -eq 2 ] || fail "several volumes into one fio file must be refused"
[ ! -e "$T/merged.log" ] || fail "a refused convert must leave no output"
echo "garbage here" > "$T/junk.txt"
"$APPSIM" trace info "$T/junk.txt" >/dev/null 2>&1; [ $? -eq 2 ] || fail "undetectable input must exit 2"
"$APPSIM" trace info "$T/missing.csv" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing file must exit 2"
"$APPSIM" trace convert "$T/msr.csv" -o "$T/x" --to msr >/dev/null 2>&1; [ $? -eq 2 ] || fail "unwritable format must exit 2"

# the shared real samples
S=${APPSIM_SRC}/../shared/traces
[ -d "$S" ] || S=/work/shared/traces
if [ -d "$S" ]; then
  "$APPSIM" trace info "$S/msr-cambridge1-sample.csv" | grep -q "1000 records" || fail "msr sample"
  "$APPSIM" trace info "$S/systor17-traces-sample.csv.gz" | grep -q "999 records" || fail "systor sample"
  "$APPSIM" trace info "$S/cloudPhysicsIO.vscsi" | grep -q "113872 records" || fail "vscsi sample"
else
  echo "shared samples not present: skipped that part"
fi

# fio accepts the iolog v3 we write (replayed as fast as it can, no timing)
if command -v fio >/dev/null; then
  printf 'fio version 3 iolog\n0 f add\n0 f read 0 4096\n10 f write 8192 4096\n20 f read 4096 4096\n' > "$T/small.log"
  "$APPSIM" trace convert "$T/small.log" -o "$T/fio.log" --to fio-v3 --fio-file "$T/fio.data" 2>/dev/null || fail "convert small"
  truncate -s 1M "$T/fio.data"
  fio --name=x --read_iolog="$T/fio.log" --replay_no_stall=1 --ioengine=psync --output-format=terse \
    >"$T/fio.out" 2>&1 || fail "fio refused our iolog: $(cat "$T/fio.out")"
fi
# and we read the iolog fio writes (v3, microsecond timestamps): 16 reads 50 ms apart
if command -v fio >/dev/null; then
  truncate -s 4M "$T/w.dat"
  fio --name=w --filename="$T/w.dat" --rw=randread --bs=4k --size=4M --io_size=64k --rate_iops=20 \
    --write_iolog="$T/w.log" --ioengine=psync --output=/dev/null >/dev/null 2>&1 || fail "fio write_iolog"
  w=$("$APPSIM" trace info "$T/w.log" --json -)
  echo "$w" | grep -q '"records": 16' || fail "fio's own iolog: $w"
  d=$(echo "$w" | grep -o '"duration_s": [0-9.]*' | awk '{print $2}')
  awk -v d="$d" 'BEGIN { exit !(d > 0.7 && d < 0.8) }' || fail "fio iolog timestamps are us: duration $d"
fi
echo "trace cli: ok"
