#!/usr/bin/env bash
# appsim never links Open MPI: started by a launcher as one of several ranks, it hands
# over to appsim-mpi in its own directory with the same arguments, and without one it
# refuses (exit 2) naming the appsim-mpi package, before touching anything. A single
# appsim under a launcher's one-rank environment runs as itself.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/alone" "$APPSIM_TMP/paired"
cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
# appsim links no MPI library.
if command -v ldd >/dev/null; then
  ! ldd "$APPSIM" | grep -qi mpi || fail "appsim links MPI: $(ldd "$APPSIM" | grep -i mpi)"
fi
cp "$APPSIM" alone/appsim
cp "$APPSIM" paired/appsim
# A stand-in appsim-mpi that records how it was started.
cat >paired/appsim-mpi <<'SH'
#!/bin/sh
printf '%s\n' "$0" "$@" >"$(dirname "$0")/handed-over.txt"
exit 0
SH
chmod +x paired/appsim-mpi

set +e
OMPI_COMM_WORLD_SIZE=4 alone/appsim io --profile 4k-random-read --target "$PWD/t" \
  >out.txt 2>err.txt
rc=$?
set -e
[ $rc -eq 2 ] || fail "without appsim-mpi: exit $rc, not 2: $(cat err.txt)"
grep -q "appsim-mpi" err.txt || fail "the refusal does not name appsim-mpi: $(cat err.txt)"
[ ! -e t ] || fail "the refused run created its target"

OMPI_COMM_WORLD_SIZE=4 paired/appsim io --profile 4k-random-read --target "$PWD/t" \
  >out.txt 2>err.txt || fail "hand-over: $(cat err.txt)"
[ -s paired/handed-over.txt ] || fail "appsim-mpi was not started: $(cat err.txt)"
want=$(printf '%s\n' "$PWD/paired/appsim-mpi" io --profile 4k-random-read --target "$PWD/t")
[ "$(cat paired/handed-over.txt)" = "$want" ] ||
  fail "appsim-mpi got other arguments: $(cat paired/handed-over.txt)"

# One rank: appsim itself (its --list needs no target).
OMPI_COMM_WORLD_SIZE=1 alone/appsim io --list >list.txt || fail "one rank refused"
grep -q 4k-random-read list.txt || fail "one rank did not run appsim io --list"
echo "mpi_handover: ok"
