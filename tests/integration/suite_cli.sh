#!/usr/bin/env bash
# `appsim suite` through the real binary: list/show, the built-in review suite as a
# file, unavailable steps reported (never silently skipped), refusals of bad suite
# files and of reusing a directory without --resume. (A suite running fake steps end
# to end and a resumed suite are in tests/unit/test_compare_suite.c.)
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$APPSIM" suite list | grep -q '^review ' || fail "list"
"$APPSIM" suite show review >review.ini
grep -q '^\[tpcc\]' review.ini || fail "show"
diff review.ini "$APPSIM_SRC/suites/review.ini" || fail "built-in differs from suites/review.ini"

mkdir -p t other
# A target that no step could create (its parent is missing) is refused before any
# step runs.
set +e; "$APPSIM" suite review --target "$APPSIM_TMP/missing/deeper" -o o0 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] && grep -q 'does not exist' err.txt || fail "missing target not refused"
[ ! -e o0 ] || fail "directory created for a missing target"
# A suite whose command does not exist: reported as unavailable, no result, exit 1.
cat >one.ini <<'INI'
[suite]
name = one
[ghost]
command = no-such-command
args = --target {target} --json {result}
INI
set +e; "$APPSIM" suite one.ini --target "$APPSIM_TMP/t" -o out >stdout.txt 2>stderr.txt; rc=$?; set -e
cat stdout.txt stderr.txt
[ $rc -eq 1 ] || fail "exit $rc"
grep -q 'ghost.*unavailable' stdout.txt || fail "step not reported unavailable"
grep -q '"status": "unavailable"' out/suite.json || fail "state file"
# Same directory without --resume is refused; with --resume it is accepted.
set +e; "$APPSIM" suite one.ini --target "$APPSIM_TMP/t" -o out >/dev/null 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] && grep -q -- '--resume' err.txt || fail "reuse not refused"
set +e; "$APPSIM" suite one.ini --target "$APPSIM_TMP/other" -o out --resume >/dev/null 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] && grep -q 'target' err.txt || fail "resume with another target not refused"

# Bad suite files: exit 2, file and line named.
printf '[a]\ncommand = x\nargz = 1\n' >bad.ini
set +e; "$APPSIM" suite bad.ini --target t -o o2 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] && grep -q 'bad.ini:3' err.txt || fail "bad key not refused: $(cat err.txt)"
[ ! -e o2 ] || fail "directory created for a refused suite"
set +e; "$APPSIM" suite review -o o3 2>err.txt; rc=$?; set -e
[ $rc -eq 2 ] || fail "missing --target accepted"
echo "suite_cli: ok"
