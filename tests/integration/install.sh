#!/usr/bin/env bash
# tests/integration/install.sh: `cmake --install` into a temporary prefix gives a
# working appsim: `appsim vdi` finds the desktop traces installed beside it (not the
# source tree's), `man -l` renders the page without warnings and `man appsim` finds
# it, the bash completion (and the zsh one, when zsh is installed) completes commands,
# actions, options, their aliases and choices (bash: every option and alias any --help
# lists; old spellings never offered; io --profile offers the built-in profiles); and
# `cpack` builds a .deb with the same files, its Debian dependencies (never Open MPI) and
# a copyright file in Debian's format, whose unpacked binary works the same way, and
# beside it the appsim-mpi package that alone depends on Open MPI.
# APPSIM_TEST_RUN_SERIAL: cpack first brings the build tree up to date (its preinstall
# step), which may relink appsim-mpi while the MPI tests hand over to it.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_SRC:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"
mkdir -p "$APPSIM_TMP"
build=$(dirname "$APPSIM")
prefix=$APPSIM_TMP/prefix
fail() {
  echo "FAIL: $*"
  exit 1
}

cmake --install "$build" --prefix "$prefix" >"$APPSIM_TMP/install.log"
for f in bin/appsim share/man/man1/appsim.1 share/bash-completion/completions/appsim \
  share/zsh/vendor-completions/_appsim share/appsim/desktops/boot.atr \
  share/appsim/desktops/initial-login.atr share/appsim/desktops/monday-login.atr; do
  [ -s "$prefix/$f" ] || fail "$f not installed"
done

# 1. vdi with the shipped captures: found under the prefix, wherever the build was.
vdi_finds_desktops() { # BINARY ROOT
  local out=$APPSIM_TMP/vdi-$(basename "$2")
  env -u APPSIM_DESKTOPS "$1" vdi --clones full --phase boot --desktops 1 \
    --target "$APPSIM_TMP/target" --curve-points 50 --point-warmup 0.2 \
    --point-duration 0.4 --quiet --json "$out.json" >"$out.txt"
  python3 - "$out.json" "$(realpath "$2")/share/appsim/desktops/boot.atr" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
origin = d["desktop_traces"]["boot"]["origin"]
assert origin == sys.argv[2], (origin, sys.argv[2])
EOF
  "$APPSIM" cleanup --target "$APPSIM_TMP/target" --quiet
}
vdi_finds_desktops "$prefix/bin/appsim" "$prefix"

# 2. The man page renders without a warning, and man finds it under the prefix.
if command -v man >/dev/null; then
  MANWIDTH=80 man --warnings -l "$prefix/share/man/man1/appsim.1" >"$APPSIM_TMP/man.txt" \
    2>"$APPSIM_TMP/man.err"
  [ ! -s "$APPSIM_TMP/man.err" ] || fail "man warnings: $(cat "$APPSIM_TMP/man.err")"
  for want in 'appsim tpcc' '--target' 'APPSIM_DESKTOPS' 'EXIT STATUS'; do
    grep -qF -- "$want" "$APPSIM_TMP/man.txt" || fail "the man page lacks '$want'"
  done
  MANPATH=$prefix/share/man man -w appsim | grep -qF "$prefix/share/man/man1/appsim.1" ||
    fail "man appsim does not find the installed page"
else
  echo "note: man is not installed (man-db); the page was not rendered"
fi

# 3. bash: complete a few command lines with the installed script.
bash --norc --noprofile -c '
set -u
source "$1"
complete -p appsim >/dev/null
t() { # WANT WORDS...
  local want=$1; shift
  COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _appsim
  [[ " ${COMPREPLY[*]} " == *" $want "* ]] || { echo "FAIL: bash [$*] gave [${COMPREPLY[*]}], not $want"; exit 1; }
}
t tpcc appsim tp
t --pacing appsim tpcc --pac
t spec appsim tpcc --pacing ""
t off appsim tpcc --pacing = o
t prepare appsim sysbench ""
t info appsim trace ""
t --format appsim trace info --f
t lmdb appsim sysbench run --engine ""
t steady appsim tpcc --warmup ""
t --time appsim sysbench run --ti
t --xfersize appsim io --xf
t --rwmixread appsim io --rw
t psync appsim sysbench run --io-engine ""
# io --profile offers the built-in profiles (any of `appsim io --list`).
t 4k-random-read appsim io --profile ""
t sql-90-10 appsim io --profile sql-
# Old spellings are recognised (their values complete) but never offered.
COMP_WORDS=(appsim vdi --engi); COMP_CWORD=2; _appsim
[[ " ${COMPREPLY[*]} " != *" --engine "* ]] || { echo "FAIL: bash offers vdi'"'"'s old --engine"; exit 1; }
' bash "$prefix/share/bash-completion/completions/appsim"

# 3b. Every option and alias each --help lists ("(also --time)", io's fio and vdbench
#     names) is offered after `appsim COMMAND --`, so a spelling the help shows cannot
#     be missing from the completion.
helps=$APPSIM_TMP/completion-helps
: >"$helps"
commands=$("$prefix/bin/appsim" --help | awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1}')
[ -n "$commands" ] || fail "appsim --help lists no commands"
for cmd in $commands; do
  words=$cmd
  [ "$cmd" != trace ] ||
    words=$("$prefix/bin/appsim" trace --help | awk '/^subcommands:/{f=1;next} f&&/^  [a-z]/{print "trace " $1}')
  while read -r line; do
    "$prefix/bin/appsim" $line --help | grep -P '^  --?[a-z]' |
      perl -ne 'print "$1\n" if /^  (-{1,2}[a-z0-9-]+)/;
        if (/\(also ([^)]*)\)/) { print "$_\n" for $1 =~ /(-{1,2}[a-z0-9_-]+)/g }' |
      sed "/^$/d; s|^|$line\t|" >>"$helps"
  done <<<"$words"
done
grep -qP '^io\t--rdpct$' "$helps" && grep -qP '^tpcc\t--time$' "$helps" ||
  fail "the help walk found no --rdpct in io or no --time in tpcc: $(head -3 "$helps")"
bash --norc --noprofile -c '
set -u
source "$1"
missing=0
while IFS=$'"'"'\t'"'"' read -r line flag; do
  read -ra cmd <<<"$line"
  COMP_WORDS=(appsim "${cmd[@]}" "${flag:0:2}"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _appsim
  [[ " ${COMPREPLY[*]} " == *" $flag "* ]] || { echo "FAIL: bash does not offer $flag after appsim $line"; missing=1; }
done <"$2"
exit $missing
' bash "$prefix/share/bash-completion/completions/appsim" "$helps" ||
  fail "the bash completion lacks options the help lists"

# 4. zsh: the script loads through compinit and completes in an interactive shell.
if command -v zsh >/dev/null; then
  zsh -n "$prefix/share/zsh/vendor-completions/_appsim"
  zsh -f "$APPSIM_SRC/tests/integration/zsh_complete.zsh" \
    "$prefix/share/zsh/vendor-completions" >"$APPSIM_TMP/zsh.txt" 2>&1 ||
    fail "zsh completion: $(cat "$APPSIM_TMP/zsh.txt")"
else
  echo "note: zsh is not installed; its completion was not tried"
fi

# 5. The Debian package: its files, its dependencies, and its binary unpacked.
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "note: no dpkg-deb or dpkg-shlibdeps (dpkg-dev): the .deb was not built"
  rm -rf "$APPSIM_TMP"
  echo ok
  exit 0
fi
cpack -G DEB -B "$APPSIM_TMP/pkg" --config "$build/CPackConfig.cmake" >"$APPSIM_TMP/cpack.log" ||
  fail "cpack: $(tail -20 "$APPSIM_TMP/cpack.log")"
deb=$(ls "$APPSIM_TMP"/pkg/appsim_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libsqlite3-0 liblmdb0 liburing2 libjansson4 libzstd1 libbz2-1.0 zlib1g; do
  [[ ", $depends" == *", $lib "* || ", $depends," == *", $lib,"* ]] ||
    fail "the package does not depend on $lib: $depends"
done
# Open MPI is for those who run on many hosts: the appsim package never depends on it.
[[ "$depends" != *mpi* ]] || fail "the appsim package depends on MPI: $depends"
# Its copyright file, in Debian's machine-readable format.
copyright_ok() { # DEB PACKAGE
  dpkg-deb --fsys-tarfile "$1" | tar -xO "./usr/share/doc/$2/copyright" >"$APPSIM_TMP/copyright" ||
    fail "$2: no /usr/share/doc/$2/copyright"
  head -1 "$APPSIM_TMP/copyright" |
    grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    fail "$2: the copyright file is not in Debian's format: $(head -3 "$APPSIM_TMP/copyright")"
  for field in 'Upstream-Name: appsim' 'Files: \*' 'Copyright: .' 'License: .'; do
    grep -qE "^$field" "$APPSIM_TMP/copyright" || fail "$2: the copyright file lacks $field"
  done
}
copyright_ok "$deb" appsim
# appsim-mpi, when this build has it: Open MPI and appsim of the same version.
if [ -x "$build/appsim-mpi" ]; then
  mdeb=$(ls "$APPSIM_TMP"/pkg/appsim-mpi_*.deb) || fail "no appsim-mpi package: $(ls "$APPSIM_TMP/pkg")"
  mdepends=$(dpkg-deb -f "$mdeb" Depends)
  [[ "$mdepends" == *libopenmpi* ]] || fail "appsim-mpi does not depend on Open MPI: $mdepends"
  [[ "$mdepends" == *"appsim (= $(dpkg-deb -f "$deb" Version))"* ]] ||
    fail "appsim-mpi does not depend on appsim of its version: $mdepends"
  dpkg-deb -c "$mdeb" >"$APPSIM_TMP/mpi-contents.txt"
  grep -q ' \./usr/bin/appsim-mpi$' "$APPSIM_TMP/mpi-contents.txt" ||
    fail "appsim-mpi lacks /usr/bin/appsim-mpi"
  copyright_ok "$mdeb" appsim-mpi
fi
dpkg-deb -c "$deb" >"$APPSIM_TMP/contents.txt"
for f in usr/bin/appsim usr/share/man/man1/appsim.1 usr/share/bash-completion/completions/appsim \
  usr/share/zsh/vendor-completions/_appsim usr/share/appsim/desktops/boot.atr; do
  grep -q " \./$f\$" "$APPSIM_TMP/contents.txt" || fail "the package lacks /$f"
done
dpkg-deb -x "$deb" "$APPSIM_TMP/unpacked"
vdi_finds_desktops "$APPSIM_TMP/unpacked/usr/bin/appsim" "$APPSIM_TMP/unpacked/usr"
rm -rf "$APPSIM_TMP"
echo ok
