#!/usr/bin/env bash
# The binary's front door: help, version, unknown commands and exit statuses.
set -u
fail() { echo "FAIL: $*"; exit 1; }
"$APPSIM" --help | grep -q "usage: appsim" || fail "--help"
"$APPSIM" --version | grep -Eq "^appsim [0-9]+\.[0-9]+\.[0-9]+" || fail "--version"
"$APPSIM" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no command must exit 2"
out=$("$APPSIM" no-such-command 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown command exit $rc"
echo "$out" | grep -q "appsim --help" || fail "unknown command message must say what to do: $out"
# every registered command answers --help with exit 0 and rejects an unknown option with 2
for cmd in $("$APPSIM" --help | awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1}'); do
  "$APPSIM" "$cmd" --help >/dev/null || fail "$cmd --help"
  "$APPSIM" "$cmd" --definitely-not-an-option >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] || fail "$cmd with a bad option exited $rc, not 2"
done
echo "cli basics: ok"
