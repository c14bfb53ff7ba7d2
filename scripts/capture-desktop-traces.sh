#!/usr/bin/env bash
# Re-captures the desktop traces shipped in trace/vdi/desktops/ with appsim itself.
#
#   scripts/capture-desktop-traces.sh image    # build the Debian desktop image (cached)
#   scripts/capture-desktop-traces.sh boot     # boot only -> boot.atr
#   scripts/capture-desktop-traces.sh all      # image, then boot + initial login, then
#                                              # a second boot + Monday login
#   scripts/capture-desktop-traces.sh update-guest  # rewrite the guest's phase driver in a
#                                              # cached image (after editing it below)
#
# How the captures are made (docs/vdi.md, "Desktop traces"):
#   1. debootstrap Debian 12 with a kernel, systemd and an Xfce desktop (xfce4-session,
#      xfwm4, xfce4-panel, xfdesktop4) on a virtual framebuffer (Xvfb) into an ext4
#      image. A desktop user "desk" exists without a home; pam_mkhomedir creates it at
#      the first login, so that login creates the profile. A guest service drives the
#      phases over the serial port: it prints APPSIM-BOOT-DONE once multi-user.target
#      is reached, waits for "login" from the host, logs "desk" in through PAM (su -l)
#      and starts the Xfce session, and prints APPSIM-LOGIN-DONE 15 s after the panel
#      and the desktop are running; once the capture has stopped it prints the
#      session's processes and the profile's size (evidence kept in WORKDIR).
#   2. A fresh copy of the image on a loop device (direct I/O); qemu (TCG: no KVM
#      here) boots it with cache=none, so each guest disk I/O is one block request on
#      the loop device, which `appsim trace capture` records:
#        boot.atr           from qemu's start to APPSIM-BOOT-DONE;
#        initial-login.atr  from "login" to APPSIM-LOGIN-DONE (first login: profile
#                           created), then the guest shuts down cleanly;
#        monday-login.atr   second boot of the same disk (caches cold, profile
#                           exists), from "login" to APPSIM-LOGIN-DONE.
# Needs root, debootstrap and qemu-system-x86 (scripts/deps.sh), and a Debian mirror
# (MIRROR=...). Work files go to WORKDIR (default /tmp/appsim-desktops).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
APPSIM=${APPSIM:-$SRC/build/appsim}
WORKDIR=${WORKDIR:-/tmp/appsim-desktops}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=${SUITE:-bookworm}
IMAGE_SIZE=${IMAGE_SIZE:-4G}
OUTDIR=${OUTDIR:-$SRC/trace/vdi/desktops}
TIMEOUT=${TIMEOUT:-1800}
GUEST_MEM=${GUEST_MEM:-1536}
DESKTOP_PKGS=xvfb,xauth,dbus-x11,libpam-systemd,xfce4-session,xfwm4,xfce4-panel,xfdesktop4,xfce4-settings,xfconf

die() { echo "capture-desktop-traces: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, loop devices, tracefs)"

MNT=""
LOOP=""
QEMU_PID=""
CAT_PID=""
cleanup() {
  [ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null || true
  [ -n "$CAT_PID" ] && kill "$CAT_PID" 2>/dev/null || true
  [ -n "$MNT" ] && mountpoint -q "$MNT" && umount "$MNT" || true
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
}
trap cleanup EXIT

# The guest's phase driver (run by appsim-phases.service after multi-user.target).
write_guest_driver() {
  local MNT=$1
  cat >"$MNT/usr/local/sbin/appsim-phases" <<'EOF'
#!/bin/sh
# Drives the capture phases over the serial port (see capture-desktop-traces.sh).
stty -F /dev/ttyS0 sane 2>/dev/null
echo APPSIM-BOOT-DONE >/dev/ttyS0
read -r cmd </dev/ttyS0
echo APPSIM-LOGIN-START >/dev/ttyS0
su -l desk -c 'exec xvfb-run -a -s "-screen 0 1280x800x24" dbus-launch --exit-with-session startxfce4' \
  >/dev/null 2>&1 &
i=0
while [ $i -lt 1200 ]; do
  pgrep -u desk -x xfdesktop >/dev/null && pgrep -u desk -x xfce4-panel >/dev/null && break
  sleep 1; i=$((i + 1))
done
sleep 15
echo APPSIM-LOGIN-DONE >/dev/ttyS0
# After the capture has stopped (the host says so): evidence in the serial log, the
# session's processes and the profile's size.
read -r cmd </dev/ttyS0
echo "APPSIM-SESSION: $(pgrep -u desk -l . | tr '\n' ' ')" >/dev/ttyS0
echo "APPSIM-PROFILE: $(du -sk /home/desk | cut -f1) KiB, $(find /home/desk | wc -l) entries" >/dev/ttyS0
echo APPSIM-EVIDENCE-DONE >/dev/ttyS0
read -r cmd </dev/ttyS0
[ "$cmd" = shutdown ] && systemctl poweroff
exit 0
EOF
  chmod +x "$MNT/usr/local/sbin/appsim-phases"
}

update_guest() {
  local img=$WORKDIR/desktop.img
  [ -f "$img" ] || die "no image to update: run '$0 image' first"
  MNT=/tmp/appsim-desktop-mnt.$$
  mkdir -p "$MNT"
  mount -o loop "$img" "$MNT"
  write_guest_driver "$MNT"
  umount "$MNT"
  rmdir "$MNT"
  MNT=""
  echo "image: guest phase driver updated in $img"
}

build_image() {
  local img=$WORKDIR/desktop.img
  if [ -f "$img" ] && [ -f "$WORKDIR/vmlinuz" ] && [ -f "$WORKDIR/initrd.img" ]; then
    echo "image: $img exists (delete it to rebuild)"
    return
  fi
  command -v debootstrap >/dev/null || die "debootstrap missing: run scripts/deps.sh"
  mkdir -p "$WORKDIR"
  rm -f "$img.tmp"
  truncate -s "$IMAGE_SIZE" "$img.tmp"
  mkfs.ext4 -q -F -L appsim-desktop "$img.tmp"
  MNT=/tmp/appsim-desktop-mnt.$$
  mkdir -p "$MNT"
  mount -o loop "$img.tmp" "$MNT"
  debootstrap --variant=minbase \
    --include=linux-image-amd64,systemd-sysv,udev,dbus,login,passwd,procps,kmod,$DESKTOP_PKGS \
    "$SUITE" "$MNT" "$MIRROR"
  echo "LABEL=appsim-desktop / ext4 defaults 0 1" >"$MNT/etc/fstab"
  echo appsim-desktop >"$MNT/etc/hostname"
  chroot "$MNT" /bin/sh -c 'echo root:appsim | chpasswd'
  # The desktop user: no home yet; the first login creates it (the profile).
  chroot "$MNT" useradd -M -s /bin/bash desk
  echo "session optional pam_mkhomedir.so skel=/etc/skel umask=0077" \
    >>"$MNT/etc/pam.d/common-session"
  # The serial port belongs to the phase driver, not to a getty.
  chroot "$MNT" systemctl mask serial-getty@ttyS0.service
  write_guest_driver "$MNT"
  cat >"$MNT/etc/systemd/system/appsim-phases.service" <<'EOF'
[Unit]
Description=appsim capture phases (boot done, login on request)
After=multi-user.target
[Service]
Type=simple
ExecStart=/usr/local/sbin/appsim-phases
[Install]
WantedBy=multi-user.target
EOF
  chroot "$MNT" systemctl enable appsim-phases.service
  printf 'virtio_pci\nvirtio_blk\n' >>"$MNT/etc/initramfs-tools/modules"
  chroot "$MNT" update-initramfs -u -k all
  cp -L "$MNT/vmlinuz" "$WORKDIR/vmlinuz"
  cp -L "$MNT/initrd.img" "$WORKDIR/initrd.img"
  chroot "$MNT" dpkg-query -W -f='${Package} ${Version}\n' >"$WORKDIR/packages.txt"
  umount "$MNT"
  rmdir "$MNT"
  MNT=""
  mv "$img.tmp" "$img"
  echo "image: built $img"
}

SER=$WORKDIR/serial
# Starts qemu on $LOOP in the background with the serial port on $SER.{in,out}.
start_guest() {
  rm -f "$SER.in" "$SER.out"
  mkfifo "$SER.in" "$SER.out"
  : >"$SER.log"
  cat "$SER.out" >>"$SER.log" &
  CAT_PID=$!
  qemu-system-x86_64 -accel tcg -machine q35 -smp 1 -m "$GUEST_MEM" -display none \
    -monitor none -serial "pipe:$SER" -nic none \
    -kernel "$WORKDIR/vmlinuz" -initrd "$WORKDIR/initrd.img" \
    -append "root=/dev/vda rw console=ttyS0 quiet" \
    -drive "file=$LOOP,format=raw,if=virtio,cache=none,aio=native" </dev/null >/dev/null 2>&1 &
  QEMU_PID=$!
  echo "$QEMU_PID" >"$WORKDIR/qemu.pid"
}

# wait_marker TEXT: until the guest prints TEXT on the serial port (or times out).
wait_marker() {
  local deadline=$((SECONDS + TIMEOUT))
  while ! grep -q "$1" "$SER.log" 2>/dev/null; do
    kill -0 "$(cat "$WORKDIR/qemu.pid")" 2>/dev/null || die "qemu exited before $1"
    [ $SECONDS -lt $deadline ] || die "no $1 within $TIMEOUT s"
    sleep 0.2
  done
}

stop_guest() {
  kill -9 "$QEMU_PID" 2>/dev/null || true
  wait "$QEMU_PID" 2>/dev/null || true
  QEMU_PID=""
  kill "$CAT_PID" 2>/dev/null || true
  wait "$CAT_PID" 2>/dev/null || true
  CAT_PID=""
}

capture() { # capture OUT COMMAND...: appsim trace capture of $LOOP while COMMAND runs
  local out=$1
  shift
  mkdir -p "$(dirname "$out")"
  "$APPSIM" trace capture --json --force --device "$LOOP" -o "$out" -- "$@" >"${out%.atr}.capture.json"
  cat "${out%.atr}.capture.json"
}

run_phases() {
  local what=$1
  [ -x "$APPSIM" ] || die "appsim binary not found at $APPSIM (build first or set APPSIM)"
  command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run scripts/deps.sh"
  local copy=$WORKDIR/run.img
  cp --sparse=always "$WORKDIR/desktop.img" "$copy"
  LOOP=$(losetup --find --show --direct-io=on "$copy")
  export -f start_guest wait_marker die
  export SER WORKDIR GUEST_MEM LOOP TIMEOUT
  # Boot: the capture starts qemu, and ends when boot has finished (qemu keeps running).
  capture "$OUTDIR/boot.atr" bash -c 'start_guest; wait_marker APPSIM-BOOT-DONE'
  QEMU_PID=$(cat "$WORKDIR/qemu.pid")
  CAT_PID=$(pgrep -f "cat $SER.out" | head -1)
  if [ "$what" = boot ]; then
    stop_guest
  else
    capture "$OUTDIR/initial-login.atr" bash -c \
      'echo login >"$SER.in"; wait_marker APPSIM-LOGIN-DONE'
    echo evidence >"$SER.in"
    wait_marker APPSIM-EVIDENCE-DONE
    cp "$SER.log" "$WORKDIR/serial-first-boot.log"
    echo shutdown >"$SER.in"
    wait "$QEMU_PID" 2>/dev/null || while kill -0 "$QEMU_PID" 2>/dev/null; do sleep 1; done
    QEMU_PID=""
    stop_guest
    # Second boot of the same disk: caches cold, the profile exists.
    start_guest
    wait_marker APPSIM-BOOT-DONE
    capture "$OUTDIR/monday-login.atr" bash -c \
      'echo login >"$SER.in"; wait_marker APPSIM-LOGIN-DONE'
    echo evidence >"$SER.in"
    wait_marker APPSIM-EVIDENCE-DONE
    cp "$SER.log" "$WORKDIR/serial-second-boot.log"
    stop_guest
  fi
  losetup -d "$LOOP"
  LOOP=""
  rm -f "$copy"
  # Provenance next to the traces: how, when, with what.
  {
    echo "captured: $(date -u +%Y-%m-%dT%H:%M:%SZ) by scripts/capture-desktop-traces.sh $what"
    echo "host: $(uname -sr), $(nproc) CPUs; $(qemu-system-x86_64 --version | head -1) (TCG)"
    echo "guest: Debian $SUITE, $(grep -E '^linux-image-[0-9]' "$WORKDIR/packages.txt" | head -1), $(wc -l <"$WORKDIR/packages.txt") packages (packages.txt), ${GUEST_MEM} MiB, 1 vCPU"
    for f in "$WORKDIR"/serial-*-boot.log; do
      [ -f "$f" ] && grep -a -E '^APPSIM-(SESSION|PROFILE)' "$f" | sed "s|^|$(basename "$f" .log): |"
    done
  } >"$OUTDIR/provenance.txt"
  cp "$WORKDIR/packages.txt" "$OUTDIR/packages.txt"
  ls -l "$OUTDIR"
}

case "${1:-all}" in
image) build_image ;;
update-guest) update_guest ;;
boot) run_phases boot ;;
all)
  build_image
  run_phases all
  ;;
*) die "usage: $0 image|update-guest|boot|all" ;;
esac
