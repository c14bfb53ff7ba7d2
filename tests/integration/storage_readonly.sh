#!/usr/bin/env bash
# A directory on a read-only filesystem is refused for writing with exit 2 and a message
# naming the problem (`cleanup` needs to write); `info` still describes it. Needs root to
# mount a read-only tmpfs; skipped (77) otherwise.
set -u
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then echo "skipped: mounting a read-only tmpfs needs root"; exit 77; fi
mkdir -p "$APPSIM_TMP"
T=$(mktemp -d "$APPSIM_TMP/ro.XXXXXX")
mount -t tmpfs -o ro,size=1m appsim-ro-test "$T" || { rmdir "$T"; echo "skipped: mount failed"; exit 77; }
trap 'umount "$T"; rmdir "$T"' EXIT
out=$("$APPSIM" cleanup --target "$T" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "read-only target exit $rc: $out"
echo "$out" | grep -q "read-only" || fail "message does not say read-only: $out"
"$APPSIM" info --target "$T" >/dev/null 2>&1 || fail "info on a read-only target"
echo "storage read-only: ok"
