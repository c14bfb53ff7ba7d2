#!/usr/bin/env bash
# tests/integration/vocabulary.sh: one option vocabulary across every command. Walks
# the --help of every command (and of every `trace` subcommand) and fails when a
# shared concept (target, I/O engine, buffered, duration, warm-up, report interval,
# result file, quiet, seed, curve points) is spelled two ways, when a shared option
# has another placeholder or default than elsewhere, or when the generated help is
# malformed (a literal %%, two defaults on one line, an engine option without its
# default). Then checks the behaviours the vocabulary promises: old spellings still
# work with a note on stderr, --time is --duration, and --json - puts the result
# document, and nothing else, on stdout.
set -u
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"
mkdir -p "$APPSIM_TMP"
cd "$APPSIM_TMP" || exit 1
errors=0
fail() {
  echo "FAIL: $*"
  errors=$((errors + 1))
}

helps=$APPSIM_TMP/helps
: >"$helps"
commands=$("$APPSIM" --help | awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1}')
[ -n "$commands" ] || fail "appsim --help lists no commands"
for cmd in $commands; do
  if [ "$cmd" = trace ]; then
    for sub in $("$APPSIM" trace --help | awk '/^subcommands:/{f=1;next} f&&/^  [a-z]/{print $1}'); do
      "$APPSIM" trace "$sub" --help >"$APPSIM_TMP/h" 2>&1 || fail "trace $sub --help exited non-zero"
      sed "s|^|trace-$sub\t|" "$APPSIM_TMP/h" >>"$helps"
    done
    continue
  fi
  "$APPSIM" "$cmd" --help >"$APPSIM_TMP/h" 2>&1 || fail "$cmd --help exited non-zero"
  sed "s|^|$cmd\t|" "$APPSIM_TMP/h" >>"$helps"
done

# Option lines: "CMD<TAB>  --name [PLACEHOLDER]  help".
opts=$APPSIM_TMP/opts
grep -P '^[^\t]+\t  --?[a-z]' "$helps" >"$opts"
[ "$(wc -l <"$opts")" -gt 100 ] || fail "found only $(wc -l <"$opts") option lines in the help texts"

# 1. Each concept has one spelling: the other spellings must not be options anywhere
#    (old spellings are accepted, but never shown).
while read -r canonical others; do
  for other in $others; do
    hits=$(grep -P "^[^\t]+\t  -{1,2}\Q$other\E( |$)" "$opts" | cut -f1 | sort -u | tr '\n' ' ')
    [ -z "$hits" ] || fail "--$canonical is spelled --$other in: $hits"
  done
done <<'EOF'
ioengine io-engine io_engine
duration time runtime run-time
warmup warm-up ramp-time ramp_time
report-interval interval progress status-interval
json json-out result result-file
quiet q silent
seed rand-seed randseed random-seed
curve-points points curve-fractions
target dir directory filename
buffered direct no-direct o-direct
EOF
# An I/O engine option under another name (vdi's --engine was one).
while IFS= read -r l; do fail "an I/O engine option not called --ioengine: $l"; done \
  < <(grep -P '^[^\t]+\t  --(?!ioengine )[a-z-]+ .*\b(io_uring|psync)\b' "$opts")
# The result document under another option (vdi's -o was one).
while IFS= read -r l; do fail "the result document is --json FILE: $l"; done \
  < <(grep -P '^[^\t]+\t  (-o|--output) .*(JSON|result document)' "$opts")

# 2. Shared options have one placeholder and default everywhere.
expect() { # option, regular expression its line must match
  while IFS= read -r l; do fail "--$1 must look like /$2/ everywhere: $l"; done \
    < <(grep -P "^[^\t]+\t  --$1( |$)" "$opts" | grep -vP "$2")
}
expect json '  --json FILE '
expect duration '  --duration TIME .*\(also --time[,)]'
expect warmup '  --warmup TIME\|steady '
expect report-interval '  --report-interval TIME .*\(default: 5s\)$'
expect seed '  --seed N '
expect curve-points '  --curve-points PCT,\.\.\. .*percent'
expect ioengine '  --ioengine io_uring\|psync .*\(default: io_uring\)$'
expect target '  --target (PATH|DIR) '
expect buffered '  --buffered  '
expect quiet '  --quiet  '
for o in json duration report-interval seed ioengine quiet; do
  n=$(grep -cP "^[^\t]+\t  --$o( |$)" "$opts")
  [ "$n" -ge 2 ] || fail "--$o appears in only $n command(s): is the vocabulary test reading the help?"
done

# 3. Generated help is well-formed.
while IFS= read -r l; do fail "literal %% in help: $l"; done < <(grep -F '%%' "$helps")
while IFS= read -r l; do fail "two defaults on one help line: $l"; done \
  < <(grep -P '^[^\t]+\t  -.*default.*\(default: ' "$opts")

# 4. The behaviours behind the vocabulary.
dir=$APPSIM_TMP/target
mkdir -p "$dir"
# --json - : the document alone on stdout (info describes a directory without writing).
"$APPSIM" info --target "$dir" --json - >"$APPSIM_TMP/out" 2>"$APPSIM_TMP/err" ||
  fail "info --json - exited non-zero: $(cat "$APPSIM_TMP/err")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$APPSIM_TMP/out" 2>/dev/null ||
  fail "info --json -: stdout is not one JSON document: $(head -c 300 "$APPSIM_TMP/out")"
[ ! -e ./- ] && [ ! -e "$dir/-" ] || fail "--json - wrote a file named '-'"
# An old spelling works, with a one-line note naming the new one; --time is --duration.
"$APPSIM" io --target "$dir" --file-size 4M --size 1M --threads 1 --bs 4k --warmup 0 \
  --time 0.2 --io-engine psync --quiet --json - >"$APPSIM_TMP/out" 2>"$APPSIM_TMP/err" ||
  fail "io with --time and --io-engine exited non-zero: $(cat "$APPSIM_TMP/err")"
grep -q -- '--io-engine is an old spelling of --ioengine' "$APPSIM_TMP/err" ||
  fail "no deprecation note for --io-engine: $(cat "$APPSIM_TMP/err")"
python3 - "$APPSIM_TMP/out" <<'PY' || fail "io --time/--io-engine result: $(head -c 300 "$APPSIM_TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["config"]
assert c["ioengine"] == "psync", c["ioengine"]
assert abs(c["duration"] - 0.2) < 1e-9, c["duration"]
assert "time" not in c and "io-engine" not in c
PY
# An unknown spelling is still refused.
"$APPSIM" io --target "$dir" --io-engines psync >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option must exit 2"

[ "$errors" -eq 0 ] || exit 1
echo "vocabulary: ok"
