#!/usr/bin/env bash
# Installs what appsim needs to build and test on Debian 12. As root it runs apt-get;
# otherwise it prints the exact apt-get line and exits 1. libnvme's pkg-config file
# requires json-c and openssl: without libjson-c-dev and libssl-dev CMake cannot use
# libnvme, and the build leaves NVMe identity out (with a warning).
set -euo pipefail
PKGS=(build-essential cmake pkg-config libsqlite3-dev sqlite3 liblmdb-dev lmdb-utils
      liburing-dev libjansson-dev libcmocka-dev zlib1g-dev libbz2-dev libzstd-dev
      libnvme-dev libjson-c-dev libssl-dev libblkid-dev util-linux fio time jq sysbench cppcheck clang clang-format libclang-rt-14-dev
      python3 bc zstd bzip2 gzip parted e2fsprogs man-db zsh openmpi-bin libopenmpi-dev
      qemu-system-x86 debootstrap chromium libhdrhistogram-java default-jre-headless)
# Only the packages that are missing.
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "appsim needs these Debian packages; run as root:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
