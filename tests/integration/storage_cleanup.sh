#!/usr/bin/env bash
# `appsim cleanup --target DIR` removes exactly the files listed in the manifest, and
# the manifest; files it does not list (and names that try to escape the directory)
# survive. Bad targets exit 2.
set -u
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$APPSIM_TMP"
T=$(mktemp -d "$APPSIM_TMP/cleanup.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir "$T/dir"
echo keep >"$T/outside"
echo keep >"$T/dir/user.db"
echo ours >"$T/dir/a.dat"
echo ours >"$T/dir/b.dat"
printf '# appsim manifest\na.dat\nb.dat\ngone.dat\n../outside\n/etc/hostname\n' >"$T/dir/.appsim-manifest"

out=$("$APPSIM" cleanup --target "$T/dir" 2>&1) || fail "cleanup failed: $out"
[ ! -e "$T/dir/a.dat" ] && [ ! -e "$T/dir/b.dat" ] || fail "manifest files left: $(ls -A "$T/dir")"
[ ! -e "$T/dir/.appsim-manifest" ] || fail "manifest left behind"
[ -e "$T/dir/user.db" ] || fail "cleanup deleted a file that is not in the manifest"
[ -e "$T/outside" ] || fail "cleanup followed ../ out of the target"
[ -e /etc/hostname ] || fail "cleanup touched an absolute path"
echo "$out" | grep -q "removed .*a.dat" || fail "cleanup does not report what it removed: $out"
echo "$out" | grep -q "invalid name '../outside'" || fail "escape attempt not reported: $out"

# Nothing to do is fine; a second run removes nothing.
out=$("$APPSIM" cleanup --target "$T/dir" 2>&1) || fail "second cleanup: $out"
echo "$out" | grep -q "0 file(s) removed" || fail "second cleanup: $out"
[ -e "$T/dir/user.db" ] || fail "second cleanup deleted user.db"

"$APPSIM" cleanup --target "$T/nope" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing target must exit 2"
[ ! -e "$T/nope" ] || fail "cleanup created the missing target"
"$APPSIM" cleanup --target "$T/outside" >/dev/null 2>&1; [ $? -eq 2 ] || fail "file target must exit 2"
[ -e "$T/outside" ] || fail "cleanup removed a file given as target"
echo "storage cleanup: ok"
