#!/usr/bin/env bash
# Re-captures the desktop traces shipped in trace/desktops/ with appsim itself.
#
#   scripts/capture-desktop-traces.sh image    # build the Debian image (once, cached)
#   scripts/capture-desktop-traces.sh boot     # capture boot -> trace/desktops/boot.atr
#   scripts/capture-desktop-traces.sh all      # both
#
# How a capture is made (docs/vdi.md, "Desktop traces"):
#   1. debootstrap a Debian 12 system (kernel, systemd, udev) into an ext4 image file;
#      a oneshot unit prints APPSIM-BOOT-DONE on the serial console once
#      multi-user.target is reached (boot finished, login prompt up).
#   2. For each capture: copy the pristine image (every capture starts from the same
#      bytes), attach the copy to a loop device with direct I/O, and run
#        appsim trace capture --device /dev/loopN -o OUT -- qemu-system-x86_64 ...
#      qemu (TCG, no KVM here) boots the guest from the loop device with cache=none,
#      so every guest disk I/O is one block request on the loop device.
#   3. When the marker appears on the serial console, qemu is killed: the trace ends
#      at the end of boot and contains no shutdown I/O.
# Needs root, debootstrap and qemu-system-x86 (scripts/deps.sh), and network access to
# a Debian mirror (MIRROR=...). Work files go to WORKDIR (default /tmp/appsim-desktops).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
APPSIM=${APPSIM:-$SRC/build/appsim}
WORKDIR=${WORKDIR:-/tmp/appsim-desktops}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=${SUITE:-bookworm}
IMAGE_SIZE=${IMAGE_SIZE:-2G}
OUTDIR=${OUTDIR:-$SRC/trace/desktops}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-900}
GUEST_MEM=${GUEST_MEM:-1024}

die() { echo "capture-desktop-traces: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, loop devices, tracefs)"

MNT=""
LOOP=""
QEMU_PID=""
cleanup() {
  [ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null || true
  [ -n "$MNT" ] && mountpoint -q "$MNT" && umount "$MNT" || true
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
}
trap cleanup EXIT

build_image() {
  local img=$WORKDIR/pristine.img
  if [ -f "$img" ] && [ -f "$WORKDIR/vmlinuz" ] && [ -f "$WORKDIR/initrd.img" ]; then
    echo "image: $img exists (delete $WORKDIR to rebuild)"
    return
  fi
  command -v debootstrap >/dev/null || die "debootstrap missing: run scripts/deps.sh"
  mkdir -p "$WORKDIR"
  rm -f "$img.tmp"
  truncate -s "$IMAGE_SIZE" "$img.tmp"
  mkfs.ext4 -q -F -L appsim-desktop "$img.tmp"
  MNT=$(mktemp -d /tmp/appsim-desktop-mnt.XXXXXX)
  mount -o loop "$img.tmp" "$MNT"
  debootstrap --variant=minbase \
    --include=linux-image-amd64,systemd-sysv,udev,dbus,login,passwd,procps,kmod \
    "$SUITE" "$MNT" "$MIRROR"
  # The guest: root on the virtio disk, console on the serial port, a boot marker.
  echo "LABEL=appsim-desktop / ext4 defaults 0 1" >"$MNT/etc/fstab"
  echo appsim-desktop >"$MNT/etc/hostname"
  chroot "$MNT" /bin/sh -c 'echo root:appsim | chpasswd'
  cat >"$MNT/etc/systemd/system/appsim-boot-done.service" <<'EOF'
[Unit]
Description=Tell the capture script that boot has finished
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo APPSIM-BOOT-DONE >/dev/ttyS0'
[Install]
WantedBy=multi-user.target
EOF
  chroot "$MNT" systemctl enable appsim-boot-done.service
  # virtio drivers in the initramfs so that the root disk is found.
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

# capture_boot OUT: one boot of a fresh copy of the image, traced on its loop device.
capture_boot() {
  local out=$1
  [ -x "$APPSIM" ] || die "appsim binary not found at $APPSIM (build first or set APPSIM)"
  command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run scripts/deps.sh"
  local copy=$WORKDIR/boot-run.img serial=$WORKDIR/boot-serial.log
  cp --sparse=always "$WORKDIR/pristine.img" "$copy"
  LOOP=$(losetup --find --show --direct-io=on "$copy")
  rm -f "$serial"
  # The command traced: qemu until the marker shows, then killed (no shutdown I/O).
  cat >"$WORKDIR/boot-guest.sh" <<EOF
#!/usr/bin/env bash
qemu-system-x86_64 -accel tcg -machine q35 -smp 1 -m $GUEST_MEM -nographic \\
  -monitor none -serial file:$serial -nic none \\
  -kernel $WORKDIR/vmlinuz -initrd $WORKDIR/initrd.img \\
  -append "root=/dev/vda rw console=ttyS0 quiet" \\
  -drive file=$LOOP,format=raw,if=virtio,cache=none,aio=native &
pid=\$!
for ((i = 0; i < $BOOT_TIMEOUT * 5; i++)); do
  if grep -q APPSIM-BOOT-DONE "$serial" 2>/dev/null; then
    kill -9 \$pid; wait \$pid 2>/dev/null; exit 0
  fi
  kill -0 \$pid 2>/dev/null || { echo "qemu exited before boot finished" >&2; exit 1; }
  sleep 0.2
done
kill -9 \$pid; echo "boot did not finish in $BOOT_TIMEOUT s" >&2; exit 1
EOF
  chmod +x "$WORKDIR/boot-guest.sh"
  mkdir -p "$(dirname "$out")"
  "$APPSIM" trace capture --device "$LOOP" -o "$out" -- "$WORKDIR/boot-guest.sh"
  losetup -d "$LOOP"
  LOOP=""
  rm -f "$copy"
  echo "boot: captured $out"
}

case "${1:-all}" in
image) build_image ;;
boot) capture_boot "$OUTDIR/boot.atr" ;;
all)
  build_image
  capture_boot "$OUTDIR/boot.atr"
  ;;
*) die "usage: $0 image|boot|all" ;;
esac
